#!/usr/bin/env python3
"""Writes mica's TFLite model corpus through TensorFlow's own converter.

Every model is a Keras model (tf_keras, i.e. Keras 2 as bundled for TensorFlow)
with trained-like weights (Laplacian, optionally magnitude-pruned or 2:4
structured), batch-norm statistics calibrated on random data, converted by
tf.lite.TFLiteConverter with full-integer post-training quantization from a
random representative data set (int8, or int16 activations with int8 weights).

Optional tool: needs tensorflow-cpu and tf-keras from PyPI (versions pinned in
test/corpus/requirements.txt). mica itself never runs this.

    make_corpus.py generate [--out DIR] [--only NAME ...] [--shard I/N]
    make_corpus.py split    [--out DIR]
    make_corpus.py manifest [--out DIR] [--mica BUILD/bin/mica]
    make_corpus.py list
"""

import argparse
import collections
import hashlib
import json
import os
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_DETERMINISTIC_OPS", "1")
os.environ.setdefault("PYTHONHASHSEED", "0")

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "models")
SPLIT_SALT = ""  # the split rule: see split_half(); never change after the first commit


# --------------------------------------------------------------------------- #
# Weight distributions
# --------------------------------------------------------------------------- #

def _laplace(rng, shape, std):
    # A Laplace(0, b) variable has standard deviation b * sqrt(2).
    return rng.laplace(0.0, std / 2 ** 0.5, size=shape).astype("float32")


def _prune_magnitude(w, fraction):
    flat = abs(w).reshape(-1)
    k = int(flat.size * fraction)
    if k == 0:
        return w
    import numpy as np
    out = w.copy()
    # Zero exactly k elements (ties broken by position) so the sparsity is exact.
    order = np.argsort(flat, kind="stable")[:k]
    out.reshape(-1)[order] = 0.0
    return out


def _prune_2of4(w, in_axis):
    """Keeps the 2 largest magnitudes in every group of 4 consecutive input
    channels (the layout of structured sparsity in NPU weight encoders)."""
    import numpy as np
    moved = np.moveaxis(w, in_axis, -1).copy()
    cin = moved.shape[-1]
    flat = moved.reshape(-1, cin)
    for start in range(0, cin, 4):
        group = flat[:, start:start + 4]
        keep = min(2, group.shape[1])
        drop = np.argsort(abs(group), axis=1, kind="stable")[:, : group.shape[1] - keep]
        np.put_along_axis(group, drop, 0.0, axis=1)
        flat[:, start:start + 4] = group
    return np.moveaxis(flat.reshape(moved.shape), -1, in_axis)


def apply_weights(model, mode, seed):
    """Gives every layer trained-like weights. mode: laplace | prune50 | 2of4."""
    import numpy as np
    import tf_keras as keras
    L = keras.layers
    rng = np.random.default_rng(seed)

    def kernel(w, fan_in, in_axis, depthwise=False):
        v = _laplace(rng, w.shape, (2.0 / max(fan_in, 1)) ** 0.5)
        if mode == "prune50" or (mode == "2of4" and depthwise):
            v = _prune_magnitude(v, 0.5)
        elif mode == "2of4":
            v = _prune_2of4(v, in_axis)
        return v

    for layer in model.layers:
        ws = layer.get_weights()
        if not ws:
            continue
        names = [w.name.split("/")[-1].split(":")[0] for w in layer.weights]
        new = []
        for name, w in zip(names, ws):
            if isinstance(layer, L.BatchNormalization):
                if name == "gamma":
                    w = np.clip(1.0 + _laplace(rng, w.shape, 0.25), 0.1, None)
                elif name == "beta":
                    w = _laplace(rng, w.shape, 0.1)
            elif isinstance(layer, L.LayerNormalization):
                if name == "gamma":
                    w = 1.0 + _laplace(rng, w.shape, 0.1)
                elif name == "beta":
                    w = _laplace(rng, w.shape, 0.05)
            elif isinstance(layer, L.PReLU) and name == "alpha":
                w = rng.uniform(0.02, 0.3, size=w.shape).astype("float32")
            elif name == "depthwise_kernel":
                w = kernel(w, w.shape[0] * (w.shape[1] if w.ndim == 4 else 1), -2, depthwise=True)
            elif name == "pointwise_kernel":
                w = kernel(w, w.shape[-2], -2)
            elif name == "kernel":
                if isinstance(layer, L.Conv2DTranspose):
                    # (kh, kw, out, in): input channels on the last axis.
                    w = kernel(w, w.shape[0] * w.shape[1] * w.shape[3] // 4, -1)
                elif w.ndim == 4 and isinstance(layer, L.Conv2D) and getattr(layer, "groups", 1) > 1:
                    w = kernel(w, w.shape[0] * w.shape[1] * w.shape[2], -2)
                elif w.ndim >= 2:
                    fan_in = int(np.prod(w.shape[:-1]))
                    if isinstance(layer, (L.LSTM, L.GRU, L.SimpleRNN, L.MultiHeadAttention)):
                        fan_in = fan_in * 2
                    w = kernel(w, fan_in, -2)
            elif name == "recurrent_kernel":
                w = kernel(w, w.shape[0] * 2, 0)
            elif name == "bias":
                b = _laplace(rng, w.shape, 0.02)
                if isinstance(layer, L.LSTM) and w.ndim == 1:
                    units = w.shape[0] // 4
                    b[units:2 * units] += 1.0  # forget-gate bias, as trained LSTMs have
                w = b
            elif name in ("layer_scale_parameter", "gamma"):
                w = (w * 0 + 1e-1 * (1 + _laplace(rng, w.shape, 0.2))).astype("float32")
            new.append(w.astype("float32"))
        layer.set_weights(new)


def calibrate_batchnorm(model, sample):
    """Sets every BatchNormalization's moving statistics to the batch
    statistics of `sample` (a forward pass in training mode with momentum 0),
    so activations are normalized as in a trained network."""
    import tf_keras as keras
    bns = [l for l in _all_layers(model) if isinstance(l, keras.layers.BatchNormalization)]
    if not bns:
        return
    saved = [b.momentum for b in bns]
    for b in bns:
        b.momentum = 0.0
    model(sample, training=True)
    for b, m in zip(bns, saved):
        b.momentum = m


def _all_layers(model):
    out = []
    for l in model.layers:
        out.append(l)
        if hasattr(l, "layers"):
            out.extend(_all_layers(l))
    return out


# --------------------------------------------------------------------------- #
# Model builders
# --------------------------------------------------------------------------- #

def K():
    import tf_keras as keras
    return keras


def app_mobilenet_v1(shape, alpha, classes=10, depth_multiplier=1):
    return K().applications.MobileNet(input_shape=shape, alpha=alpha, depth_multiplier=depth_multiplier,
                                      weights=None, classes=classes)


def app_mobilenet_v2(shape, alpha, classes=10):
    return K().applications.MobileNetV2(input_shape=shape, alpha=alpha, weights=None, classes=classes)


def app_mobilenet_v3(shape, alpha, large, minimalistic=False, classes=10):
    f = K().applications.MobileNetV3Large if large else K().applications.MobileNetV3Small
    return f(input_shape=shape, alpha=alpha, minimalistic=minimalistic, weights=None, classes=classes,
             include_preprocessing=False)


def app_efficientnet(shape, width, depth, lite=False, classes=10):
    from tf_keras.src.applications import efficientnet as en
    import copy
    blocks = copy.deepcopy(en.DEFAULT_BLOCKS_ARGS)
    kw = {}
    if lite:  # EfficientNet-lite: no squeeze-excitation, ReLU6
        for b in blocks:
            b["se_ratio"] = 0.0
        kw["activation"] = K().activations.relu6 if hasattr(K().activations, "relu6") else "relu"
    return en.EfficientNet(width, depth, shape[0], blocks_args=blocks, model_name="efficientnet",
                           weights=None, input_shape=shape, classes=classes, **kw)


def app_efficientnet_v2(shape, width, depth, classes=10):
    from tf_keras.src.applications import efficientnet_v2 as en
    return en.EfficientNetV2(width, depth, shape[0], model_name="efficientnetv2-b0", weights=None,
                             input_shape=shape, classes=classes, include_preprocessing=False)


def app_nasnet(shape, penultimate, blocks, stem, classes=10):
    from tf_keras.src.applications import nasnet
    return nasnet.NASNet(input_shape=shape, penultimate_filters=penultimate, num_blocks=blocks,
                         stem_block_filters=stem, skip_reduction=False, filter_multiplier=2,
                         weights=None, classes=classes, default_size=shape[0])


def app_densenet(shape, blocks, classes=10):
    from tf_keras.src.applications import densenet
    return densenet.DenseNet(blocks, weights=None, input_shape=shape, classes=classes)


def app_resnet(shape, version, filters, blocks, classes=10, groups=None):
    from tf_keras.src.applications import resnet
    stack = {1: resnet.stack1, 2: resnet.stack2, 3: resnet.stack3}[version]

    def stack_fn(x):
        for i, (f, b) in enumerate(zip(filters, blocks)):
            kw = {"groups": groups} if version == 3 else {}
            x = stack(x, f, b, stride1=1 if i == 0 else 2, name="conv%d" % (i + 2), **kw)
        return x
    return resnet.ResNet(stack_fn, version == 2, version != 3, model_name="resnet", weights=None,
                         input_shape=shape, classes=classes)


def app_convnext(shape, depths, dims, classes=10):
    from tf_keras.src.applications import convnext
    return convnext.ConvNeXt(depths, dims, default_size=shape[0], model_name="convnext",
                             include_preprocessing=False, weights=None, input_shape=shape, classes=classes)


def app_regnet(shape, depths, widths, group_width, block_type, classes=10):
    from tf_keras.src.applications import regnet
    return regnet.RegNet(depths, widths, group_width, block_type, shape[0], model_name="regnet",
                         include_preprocessing=False, weights=None, input_shape=shape, classes=classes)


# ---- hand-built op-pattern models ------------------------------------------ #

def _hswish(x):
    L = K().layers
    r = L.ReLU(6.0)(L.Lambda(lambda t: t + 3.0)(x))
    return L.Multiply()([x, L.Lambda(lambda t: t * (1.0 / 6.0))(r)])


def _silu(x):
    L = K().layers
    return L.Multiply()([x, L.Activation("sigmoid")(x)])


def _act(x, kind):
    L = K().layers
    if kind == "relu":
        return L.ReLU()(x)
    if kind == "relu6":
        return L.ReLU(6.0)(x)
    if kind == "silu":
        return _silu(x)
    if kind == "hswish":
        return _hswish(x)
    if kind == "prelu":
        return L.PReLU(shared_axes=[1, 2])(x)
    if kind == "leaky":
        return L.LeakyReLU(0.1)(x)
    if kind == "tanh":
        return L.Activation("tanh")(x)
    if kind == "sigmoid":
        return L.Activation("sigmoid")(x)
    if kind == "none":
        return x
    raise ValueError(kind)


def _cbr(x, filters, k=3, s=1, act="relu", padding="same", bn=True):
    L = K().layers
    x = L.Conv2D(filters, k, strides=s, padding=padding, use_bias=not bn)(x)
    if bn:
        x = L.BatchNormalization()(x)
    return _act(x, act)


def _head(x, classes=10, softmax=True):
    L = K().layers
    x = L.GlobalAveragePooling2D()(x)
    x = L.Dense(classes)(x)
    return L.Softmax()(x) if softmax else x


def hb_act_cnn(shape, act, widths=(16, 32, 64), dw=True):
    """A small MobileNet-like classifier with a given activation everywhere."""
    L = K().layers
    i = K().Input(shape, batch_size=1)
    x = _cbr(i, widths[0], 3, 2, act)
    for w in widths[1:]:
        if dw:
            x = L.DepthwiseConv2D(3, strides=2, padding="same", use_bias=False)(x)
            x = _act(L.BatchNormalization()(x), act)
            x = _cbr(x, w, 1, 1, act)
        else:
            x = _cbr(x, w, 3, 2, act)
    return K().Model(i, _head(x))


def hb_pad_conv(shape, pad, dw=False, widths=(16, 32, 64)):
    """PyTorch-export style: explicit ZeroPadding2D then a VALID strided conv."""
    L = K().layers
    i = K().Input(shape, batch_size=1)
    x = i
    for n, w in enumerate(widths):
        x = L.ZeroPadding2D(pad)(x)
        if dw and n > 0:
            x = L.DepthwiseConv2D(3, strides=2, padding="valid", use_bias=False)(x)
            x = L.ReLU(6.0)(L.BatchNormalization()(x))
            x = _cbr(x, w, 1, 1, "relu6")
        else:
            x = _cbr(x, w, 3, 2, "relu6", padding="valid")
    return K().Model(i, _head(x))


def hb_linear_convs(shape):
    """Convolutions without fused activations: linear bottlenecks, a separate
    ReLU after an ADD, and a conv followed by a standalone activation op."""
    L = K().layers
    i = K().Input(shape, batch_size=1)
    x = L.Conv2D(16, 3, strides=2, padding="same")(i)
    y = L.Conv2D(16, 3, padding="same")(x)
    y = L.Conv2D(16, 1)(y)
    x = L.ReLU()(L.Add()([x, y]))
    x = L.Conv2D(32, 3, strides=2, padding="same")(x)
    x = L.Activation("tanh")(x)
    x = L.Conv2D(32, 3, padding="same")(x)
    x = L.Activation("sigmoid")(x)
    return K().Model(i, _head(x))


def hb_upsample(shape, interp, widths=(16, 32, 64), out_ch=4):
    """A tiny U-Net style segmenter: encoder, UpSampling2D decoder with skip
    CONCATENATIONs, per-pixel SOFTMAX."""
    L = K().layers
    i = K().Input(shape, batch_size=1)
    skips = []
    x = i
    for w in widths:
        x = _cbr(x, w, 3, 1)
        skips.append(x)
        x = L.MaxPooling2D(2)(x)
    x = _cbr(x, widths[-1] * 2, 3, 1)
    for w, s in zip(reversed(widths), reversed(skips)):
        x = L.UpSampling2D(2, interpolation=interp)(x)
        x = L.Concatenate()([x, s])
        x = _cbr(x, w, 3, 1)
    x = L.Conv2D(out_ch, 1)(x)
    return K().Model(i, L.Softmax()(x))


def hb_unet_deconv(shape, stride):
    """U-Net with Conv2DTranspose upsampling and skip concatenations."""
    L = K().layers
    i = K().Input(shape, batch_size=1)
    s1 = _cbr(i, 16, 3, 1)
    x = _cbr(s1, 32, 3, stride)
    s2 = x
    x = _cbr(x, 64, 3, stride)
    x = L.Conv2DTranspose(32, 3, strides=stride, padding="same")(x)
    x = _cbr(L.Concatenate()([x, s2]), 32, 3, 1)
    x = L.Conv2DTranspose(16, 3, strides=stride, padding="same")(x)
    x = _cbr(L.Concatenate()([x, s1]), 16, 3, 1)
    return K().Model(i, L.Softmax()(L.Conv2D(3, 1)(x)))


def hb_resize_any(shape):
    """tf.image.resize to non-integer scale factors (bilinear and nearest)."""
    import tensorflow as tf
    L = K().layers
    i = K().Input(shape, batch_size=1)
    x = _cbr(i, 16, 3, 2)
    a = L.Lambda(lambda t: tf.image.resize(t, (shape[0] // 3 * 2, shape[1] // 3 * 2), "bilinear"))(x)
    b = L.Lambda(lambda t: tf.image.resize(t, (shape[0] // 3 * 2, shape[1] // 3 * 2), "nearest"))(x)
    x = L.Concatenate()([a, b])
    x = _cbr(x, 32, 3, 2)
    return K().Model(i, _head(x))


def hb_shufflenet(shape, widths=(24, 48, 96), groups=2):
    """ShuffleNetV2 units: SPLIT, CONCATENATION, channel shuffle by RESHAPE +
    TRANSPOSE, STRIDED_SLICE for the stride-2 branch input."""
    import tensorflow as tf
    L = K().layers
    i = K().Input(shape, batch_size=1)
    x = _cbr(i, widths[0], 3, 2)
    x = L.MaxPooling2D(3, 2, padding="same")(x)

    def shuffle(t):
        h, w, c = t.shape[1], t.shape[2], t.shape[3]
        t = L.Reshape((h, w, groups, c // groups))(t)
        t = L.Permute((1, 2, 4, 3))(t)
        return L.Reshape((h, w, c))(t)

    for w in widths[1:]:
        # stride-2 unit
        a = L.DepthwiseConv2D(3, 2, padding="same", use_bias=False)(x)
        a = _cbr(L.BatchNormalization()(a), w // 2, 1)
        b = _cbr(x, w // 2, 1)
        b = L.DepthwiseConv2D(3, 2, padding="same", use_bias=False)(b)
        b = _cbr(L.BatchNormalization()(b), w // 2, 1)
        x = shuffle(L.Concatenate()([a, b]))
        # stride-1 unit
        a, b = L.Lambda(lambda t: tf.split(t, 2, axis=-1))(x)
        b = _cbr(b, w // 2, 1)
        b = L.DepthwiseConv2D(3, padding="same", use_bias=False)(b)
        b = _cbr(L.BatchNormalization()(b), w // 2, 1)
        x = shuffle(L.Concatenate()([a, b]))
    x = L.Lambda(lambda t: t[:, ::2, ::2, :])(x)  # STRIDED_SLICE
    return K().Model(i, _head(x))


def hb_pool(shape, kind):
    L = K().layers
    i = K().Input(shape, batch_size=1)
    x = _cbr(i, 16, 3, 1)
    if kind == "avg":
        x = L.AveragePooling2D(2)(x)
        x = _cbr(x, 32, 3, 1)
        x = L.AveragePooling2D(3, 2, padding="same")(x)
        x = _cbr(x, 64, 3, 1)
        x = L.GlobalAveragePooling2D()(x)  # MEAN
    else:
        x = L.MaxPooling2D(2)(x)
        x = _cbr(x, 32, 3, 1)
        x = L.MaxPooling2D(3, 2, padding="same")(x)
        x = _cbr(x, 64, 3, 1)
        x = L.GlobalMaxPooling2D()(x)  # REDUCE_MAX
    x = L.Dense(10)(x)
    return K().Model(i, L.Softmax()(x))


def hb_mlp(n_in, hidden, n_out, softmax=True, act="relu"):
    L = K().layers
    i = K().Input((n_in,), batch_size=1)
    x = i
    for h in hidden:
        x = L.Dense(h)(x)
        x = L.BatchNormalization()(x)
        x = _act(x, act)
    x = L.Dense(n_out)(x)
    if softmax:
        x = L.Softmax()(x)
    return K().Model(i, x)


def hb_attention(seq, dim, heads, layers=2, classes=12):
    """Keyword-transformer style encoder: MultiHeadAttention (BATCH_MATMUL,
    SOFTMAX, TRANSPOSE), LayerNormalization, GELU MLP, class token via slicing."""
    L = K().layers
    i = K().Input((seq, dim), batch_size=1)
    x = L.Dense(dim)(i)
    for _ in range(layers):
        a = L.MultiHeadAttention(heads, dim // heads)(x, x)
        x = L.LayerNormalization(epsilon=1e-5)(L.Add()([x, a]))
        m = L.Dense(dim * 2, activation="gelu")(x)
        m = L.Dense(dim)(m)
        x = L.LayerNormalization(epsilon=1e-5)(L.Add()([x, m]))
    x = L.Lambda(lambda t: t[:, 0, :])(x)
    x = L.Dense(classes)(x)
    return K().Model(i, L.Softmax()(x))


def hb_conv1d(shape, kind):
    """Audio models on (time, features) input: Conv1D stacks, dilated TCN, or
    a DS-CNN on a 2-D spectrogram."""
    L = K().layers
    i = K().Input(shape, batch_size=1)
    x = i
    if kind == "conv1d":
        for f, s in ((32, 2), (48, 2), (64, 1)):
            x = L.Conv1D(f, 5, strides=s, padding="same", use_bias=False)(x)
            x = L.ReLU()(L.BatchNormalization()(x))
        x = L.GlobalAveragePooling1D()(x)
    elif kind == "tcn":
        x = L.Conv1D(32, 1)(x)
        for d in (1, 2, 4, 8):
            y = L.Conv1D(32, 3, dilation_rate=d, padding="causal", use_bias=False)(x)
            y = L.ReLU()(L.BatchNormalization()(y))
            x = L.Add()([x, y])
        x = L.Lambda(lambda t: t[:, -1, :])(x)
    elif kind == "dscnn":
        x = L.Reshape((shape[0], shape[1], 1))(x)
        x = _cbr(x, 64, (10, 4), 2)
        for _ in range(4):
            x = L.DepthwiseConv2D(3, padding="same", use_bias=False)(x)
            x = L.ReLU()(L.BatchNormalization()(x))
            x = _cbr(x, 64, 1)
        x = L.GlobalAveragePooling2D()(x)
    elif kind in ("crnn", "crnn_gru"):
        x = L.Conv1D(32, 5, strides=2, padding="same", use_bias=False)(x)
        x = L.ReLU()(L.BatchNormalization()(x))
        x = L.LSTM(32)(x) if kind == "crnn" else L.GRU(32, unroll=True)(x)
    elif kind == "dscnn_dm2":
        x = L.Reshape((shape[0], shape[1], 1))(x)
        x = _cbr(x, 32, (10, 4), 2)
        for _ in range(2):
            x = L.DepthwiseConv2D(3, padding="same", depth_multiplier=2, use_bias=False)(x)
            x = L.ReLU()(L.BatchNormalization()(x))
            x = _cbr(x, 32, 1)
        x = L.GlobalAveragePooling2D()(x)
    elif kind == "conv1d_pool":
        for f in (16, 32, 64):
            x = L.Conv1D(f, 3, padding="same", activation="relu")(x)
            x = L.MaxPooling1D(2)(x)
        x = L.Flatten()(x)
        x = L.Dense(64, activation="relu")(x)
    x = L.Dense(12)(x)
    return K().Model(i, L.Softmax()(x))


def hb_detect(shape, kind, classes=3):
    """Detection heads: YOLO-like (LOGISTIC, MUL by stride, CONCATENATION,
    RESHAPE), SSD-like (box/class heads reshaped and concatenated), CenterNet-like
    (sigmoid heat-map after an upsampling)."""
    import tensorflow as tf
    L = K().layers
    i = K().Input(shape, batch_size=1)
    x = _cbr(i, 16, 3, 2, "leaky")
    x = _cbr(x, 32, 3, 2, "leaky")
    f1 = _cbr(x, 48, 3, 2, "leaky")
    f2 = _cbr(f1, 64, 3, 2, "leaky")
    if kind == "yolo":
        outs = []
        for f, stride in ((f1, 8.0), (f2, 16.0)):
            p = L.Conv2D(3 * (5 + classes), 1)(f)
            h, w = p.shape[1], p.shape[2]
            p = L.Reshape((h * w * 3, 5 + classes))(p)
            xy = L.Lambda(lambda t: t[:, :, 0:2])(p)
            wh = L.Lambda(lambda t: t[:, :, 2:4])(p)
            rest = L.Lambda(lambda t: t[:, :, 4:])(p)
            xy = L.Lambda(lambda t, s=stride: t * s)(L.Activation("sigmoid")(xy))
            wh = L.Lambda(lambda t: tf.exp(t) * 4.0)(wh)
            rest = L.Activation("sigmoid")(rest)
            outs.append(L.Concatenate(axis=-1)([xy, wh, rest]))
        out = L.Concatenate(axis=1)(outs)
        return K().Model(i, out)
    if kind == "ssd":
        boxes, scores = [], []
        for f in (f1, f2):
            d = L.DepthwiseConv2D(3, padding="same")(f)
            b = L.Conv2D(4 * 3, 1)(d)
            c = L.Conv2D((classes + 1) * 3, 1)(d)
            boxes.append(L.Reshape((-1, 4))(b))
            scores.append(L.Reshape((-1, classes + 1))(c))
        b = L.Concatenate(axis=1)(boxes)
        c = L.Activation("sigmoid")(L.Concatenate(axis=1)(scores))
        return K().Model(i, [b, c])
    if kind == "blaze":  # BlazeFace-like: PReLU, padded strided depthwise, two heads
        y = L.ZeroPadding2D(((0, 1), (0, 1)))(f1)
        y = L.DepthwiseConv2D(3, strides=2, padding="valid")(y)
        y = L.Conv2D(64, 1)(y)
        y = L.PReLU(shared_axes=[1, 2])(L.Add()([y, f2]))
        c = L.Activation("sigmoid")(L.Reshape((-1, 1))(L.Conv2D(2, 1)(y)))
        r = L.Reshape((-1, 16))(L.Conv2D(32, 1)(y))
        return K().Model(i, [r, c])
    if kind == "fpn":  # feature pyramid with nearest upsampling
        p2 = L.Conv2D(32, 1)(f2)
        p1 = L.Add()([L.UpSampling2D(2, interpolation="nearest")(p2), L.Conv2D(32, 1)(f1)])
        outs = [L.Reshape((-1, 4 + classes))(L.Conv2D(2 * (4 + classes), 3, padding="same")(p))
                for p in (p1, p2)]
        return K().Model(i, L.Concatenate(axis=1)(outs))
    if kind == "centernet":
        u = L.UpSampling2D(2, interpolation="bilinear")(f2)
        x = L.Concatenate()([u, f1])
        x = _cbr(x, 32, 3, 1)
        heat = L.Activation("sigmoid")(L.Conv2D(classes, 1)(x))
        size = L.Conv2D(2, 1)(x)
        return K().Model(i, L.Concatenate()([heat, size]))
    raise ValueError(kind)


def hb_rnn(shape, kind):
    L = K().layers
    i = K().Input(shape, batch_size=1)
    x = i
    if kind == "lstm":
        x = L.LSTM(32)(x)
    elif kind == "lstm2":
        x = L.LSTM(64, return_sequences=True)(x)
        x = L.LSTM(32)(x)
    elif kind == "gru":
        x = L.GRU(32, unroll=True)(x)
    elif kind == "convlstm":
        x = L.Conv1D(32, 3, strides=2, padding="same", activation="relu")(x)
        x = L.LSTM(48)(x)
    elif kind == "bilstm":
        x = L.Bidirectional(L.LSTM(24))(x)
    x = L.Dense(8)(x)
    return K().Model(i, L.Softmax()(x))


def hb_depthwise(shape, mult, k=3, s=1):
    L = K().layers
    i = K().Input(shape, batch_size=1)
    x = L.DepthwiseConv2D(k, strides=s, depth_multiplier=mult, padding="same", use_bias=False)(i)
    x = L.ReLU()(L.BatchNormalization()(x))
    x = L.DepthwiseConv2D(k, strides=2, depth_multiplier=mult, padding="same", use_bias=False)(x)
    x = L.ReLU()(L.BatchNormalization()(x))
    x = _cbr(x, 32, 1)
    x = L.DepthwiseConv2D(5, strides=2, padding="same", use_bias=False)(x)
    x = L.ReLU()(L.BatchNormalization()(x))
    return K().Model(i, _head(x))


def hb_transpose_conv(shape, stride, k=3):
    """Encoder then Conv2DTranspose decoder (TRANSPOSE_CONV)."""
    L = K().layers
    i = K().Input(shape, batch_size=1)
    x = _cbr(i, 16, 3, stride)
    x = _cbr(x, 32, 3, stride)
    x = L.Conv2DTranspose(16, k, strides=stride, padding="same", use_bias=False)(x)
    x = L.ReLU()(L.BatchNormalization()(x))
    x = L.Conv2DTranspose(8, k, strides=stride, padding="same")(x)
    x = L.Conv2D(shape[-1], 1)(x)
    return K().Model(i, x)


def hb_residual(shape, kind):
    L = K().layers
    i = K().Input(shape, batch_size=1)
    x = _cbr(i, 32, 3, 2)
    for w in (32, 64):
        if kind == "add":
            y = _cbr(x, w, 3, 1)
            y = _cbr(y, w, 3, 1, "none")
            if y.shape[-1] != x.shape[-1]:
                x = _cbr(x, w, 1, 1, "none")
            x = L.ReLU()(L.Add()([x, y]))
        elif kind == "csp":  # cross-stage partial: SPLIT, conv on one half, CONCATENATION
            import tensorflow as tf
            a, b = L.Lambda(lambda t: tf.split(t, 2, axis=-1))(x)
            b = _cbr(b, b.shape[-1], 3, 1, "silu")
            b = _cbr(b, b.shape[-1], 3, 1, "silu")
            x = _cbr(L.Concatenate()([a, b]), w, 1, 1, "silu")
        else:  # squeeze-excitation: MEAN, FC, LOGISTIC, MUL
            x = _cbr(x, w, 3, 1)
            se = L.GlobalAveragePooling2D(keepdims=True)(x)
            se = L.Conv2D(w // 4, 1, activation="relu")(se)
            se = L.Conv2D(w, 1, activation="sigmoid")(se)
            x = L.Multiply()([x, se])
        x = L.MaxPooling2D(2)(x)
    return K().Model(i, _head(x))


def hb_vgg(shape, widths=(16, 32, 64), fc=128):
    L = K().layers
    i = K().Input(shape, batch_size=1)
    x = i
    for w in widths:
        x = _cbr(x, w, 3, 1, bn=False)
        x = _cbr(x, w, 3, 1, bn=False)
        x = L.MaxPooling2D(2)(x)
    x = L.Flatten()(x)
    x = L.Dense(fc, activation="relu")(x)
    x = L.Dense(10)(x)
    return K().Model(i, L.Softmax()(x))


def hb_large(shape, kind):
    """Models larger than an Ethos-U's SRAM: big weights or big activations."""
    L = K().layers
    i = K().Input(shape, batch_size=1)
    if kind == "weights":  # ~1.3 M int8 weights in 3x3 convs
        x = _cbr(i, 32, 3, 2)
        x = _cbr(x, 64, 3, 2)
        x = _cbr(x, 128, 3, 2)
        x = _cbr(x, 192, 3, 1)
        x = _cbr(x, 256, 3, 2)
        x = _cbr(x, 256, 3, 1)
        return K().Model(i, _head(x))
    # large activations: a full-resolution 32-channel stem on 192x192
    x = _cbr(i, 32, 3, 1)
    x = _cbr(x, 32, 3, 1)
    x = L.MaxPooling2D(2)(x)
    x = _cbr(x, 48, 3, 1)
    x = L.MaxPooling2D(2)(x)
    x = _cbr(x, 64, 3, 2)
    return K().Model(i, _head(x))


# --------------------------------------------------------------------------- #
# The corpus
# --------------------------------------------------------------------------- #

MODELS = []


def add(family, variant, build, shape, *, quant="int8", input_type=None, weights="laplace",
        input_range=(-1.0, 1.0), arch=None):
    name = "%s_%s" % (family, variant)
    MODELS.append(dict(name=name, family=family, variant=variant, build=build, shape=tuple(shape),
                       quant=quant, input_type=input_type or ("int16" if quant == "int16x8" else "int8"),
                       weights=weights, input_range=input_range, arch=arch or family,
                       seed=int(hashlib.sha256(name.encode()).hexdigest()[:8], 16)))


def _corpus():
    # ---- tf.keras.applications architectures (weights=None) ----------------
    add("mobilenet_v1", "a025_96", lambda s: app_mobilenet_v1(s, 0.25), (96, 96, 3))
    add("mobilenet_v1", "a050_96_p50", lambda s: app_mobilenet_v1(s, 0.5), (96, 96, 3), weights="prune50")
    add("mobilenet_v1", "a025_128_u8", lambda s: app_mobilenet_v1(s, 0.25), (128, 128, 3), input_type="uint8")
    add("mobilenet_v1", "a025_64_i16", lambda s: app_mobilenet_v1(s, 0.25), (64, 64, 3), quant="int16x8")
    add("mobilenet_v1", "a025_64_s24", lambda s: app_mobilenet_v1(s, 0.25), (64, 64, 3), weights="2of4")

    add("mobilenet_v2", "a035_96", lambda s: app_mobilenet_v2(s, 0.35), (96, 96, 3))
    add("mobilenet_v2", "a035_64_u8", lambda s: app_mobilenet_v2(s, 0.35), (64, 64, 3), input_type="uint8")
    add("mobilenet_v2", "a035_64_s24", lambda s: app_mobilenet_v2(s, 0.35), (64, 64, 3), weights="2of4")
    add("mobilenet_v2", "a035_96_i16", lambda s: app_mobilenet_v2(s, 0.35), (96, 96, 3), quant="int16x8")
    add("mobilenet_v2", "a050_96", lambda s: app_mobilenet_v2(s, 0.5), (96, 96, 3))

    add("mobilenet_v3_small", "a075_96", lambda s: app_mobilenet_v3(s, 0.75, False), (96, 96, 3))
    add("mobilenet_v3_small", "a050_96_min", lambda s: app_mobilenet_v3(s, 0.5, False, True), (96, 96, 3))
    add("mobilenet_v3_small", "a050_64_p50", lambda s: app_mobilenet_v3(s, 0.5, False), (64, 64, 3),
        weights="prune50")
    # No int16x8 MobileNetV3: the converter refuses it ("Quantization to 16x8-bit
    # not yet supported for op: 'HARD_SWISH'").
    add("mobilenet_v3_large", "a050_96", lambda s: app_mobilenet_v3(s, 0.5, True), (96, 96, 3))

    add("efficientnet", "w050_d050_96", lambda s: app_efficientnet(s, 0.5, 0.5), (96, 96, 3),
        input_range=(0.0, 255.0))
    add("efficientnet", "lite_w050_d050_96_p50", lambda s: app_efficientnet(s, 0.5, 0.5, lite=True), (96, 96, 3),
        weights="prune50", input_range=(0.0, 255.0))
    add("efficientnet_v2", "w050_d050_96", lambda s: app_efficientnet_v2(s, 0.5, 0.5), (96, 96, 3))

    add("nasnet", "p192_b1_64", lambda s: app_nasnet(s, 192, 1, 16), (64, 64, 3))
    add("nasnet", "p384_b2_96_p50", lambda s: app_nasnet(s, 384, 2, 16), (96, 96, 3), weights="prune50")

    add("densenet", "b2222_64", lambda s: app_densenet(s, [2, 2, 2, 2]), (64, 64, 3))
    add("densenet", "b2222_64_s24", lambda s: app_densenet(s, [2, 2, 2, 2]), (64, 64, 3), weights="2of4")

    add("resnet", "v1_f16_b1_64", lambda s: app_resnet(s, 1, (16, 32, 64, 128), (1, 1, 1, 1)), (64, 64, 3))
    add("resnet", "v1_f16_b2_96_p50", lambda s: app_resnet(s, 1, (16, 32, 64, 96), (2, 2, 2, 1)), (96, 96, 3),
        weights="prune50")
    add("resnet", "v2_f8_b2_64", lambda s: app_resnet(s, 2, (8, 16, 32, 64), (2, 2, 2, 2)), (64, 64, 3))
    add("resnet", "v1_f16_b1_64_i16", lambda s: app_resnet(s, 1, (16, 32, 64, 128), (1, 1, 1, 1)), (64, 64, 3),
        quant="int16x8")

    add("convnext", "d1121_c16_64", lambda s: app_convnext(s, [1, 1, 2, 1], [16, 32, 64, 128]), (64, 64, 3))
    add("convnext", "d1111_c24_64_i16", lambda s: app_convnext(s, [1, 1, 1, 1], [24, 48, 96, 192]), (64, 64, 3),
        quant="int16x8")

    add("regnet", "x_w16_g8_64", lambda s: app_regnet(s, [1, 1, 2, 1], [16, 32, 64, 128], 8, "X"), (64, 64, 3))
    add("regnet", "y_w24_g8_64_p50", lambda s: app_regnet(s, [1, 1, 2, 1], [24, 48, 96, 192], 8, "Y"),
        (64, 64, 3), weights="prune50")

    # ---- hand-built op patterns -------------------------------------------
    add("pad_conv", "sym_s2_64", lambda s: hb_pad_conv(s, 1), (64, 64, 3))
    add("pad_conv", "asym_s2_64", lambda s: hb_pad_conv(s, ((0, 1), (0, 1))), (64, 64, 3))
    add("pad_conv", "dw_s2_96_p50", lambda s: hb_pad_conv(s, ((0, 1), (0, 1)), dw=True), (96, 96, 3),
        weights="prune50")
    add("pad_conv", "sym_s2_64_u8", lambda s: hb_pad_conv(s, 1), (64, 64, 3), input_type="uint8")

    add("activation", "silu_64", lambda s: hb_act_cnn(s, "silu"), (64, 64, 3))
    add("activation", "hswish_64", lambda s: hb_act_cnn(s, "hswish"), (64, 64, 3))
    add("activation", "prelu_64", lambda s: hb_act_cnn(s, "prelu"), (64, 64, 3))
    add("activation", "leaky_64_s24", lambda s: hb_act_cnn(s, "leaky", dw=False), (64, 64, 3), weights="2of4")
    add("activation", "linear_64", hb_linear_convs, (64, 64, 3))
    add("activation", "relu6_64_i16", lambda s: hb_act_cnn(s, "relu6"), (64, 64, 3), quant="int16x8")
    add("activation", "silu_64_i16", lambda s: hb_act_cnn(s, "silu"), (64, 64, 3), quant="int16x8")
    add("activation", "tanh_64", lambda s: hb_act_cnn(s, "tanh", dw=False), (64, 64, 3))

    add("unet", "bilinear_64", lambda s: hb_upsample(s, "bilinear"), (64, 64, 3))
    add("unet", "nearest_64_p50", lambda s: hb_upsample(s, "nearest"), (64, 64, 3), weights="prune50")
    add("unet", "bilinear_96_i16", lambda s: hb_upsample(s, "bilinear", (8, 16, 32)), (96, 96, 3), quant="int16x8")
    add("unet", "resize_any_96", hb_resize_any, (96, 96, 3))
    add("unet", "deconv_s2_64", lambda s: hb_unet_deconv(s, 2), (64, 64, 3))
    add("unet", "deconv_s21_32x16_p50", lambda s: hb_unet_deconv(s, (2, 1)), (32, 16, 3), weights="prune50")

    add("shufflenet", "g2_64", lambda s: hb_shufflenet(s), (64, 64, 3))
    add("shufflenet", "g2_96_s24", lambda s: hb_shufflenet(s, (24, 64, 128)), (96, 96, 3), weights="2of4")

    add("pool", "avg_48", lambda s: hb_pool(s, "avg"), (48, 48, 3))
    add("pool", "max_48", lambda s: hb_pool(s, "max"), (48, 48, 3))
    add("pool", "avg_48_i16", lambda s: hb_pool(s, "avg"), (48, 48, 3), quant="int16x8")

    add("mlp", "784_256_128_10", lambda s: hb_mlp(784, (256, 128), 10), (784,))
    add("mlp", "640_128x4_p50", lambda s: hb_mlp(640, (128, 128, 8, 128, 128), 640, softmax=False), (640,),
        weights="prune50")
    add("mlp", "256_512x2_s24", lambda s: hb_mlp(256, (512, 512), 10), (256,), weights="2of4")
    add("mlp", "256_128_10_i16", lambda s: hb_mlp(256, (128, 64), 10), (256,), quant="int16x8")

    add("transformer", "s16_d64_h4", lambda s: hb_attention(16, 64, 4), (16, 64))
    add("transformer", "s16_d64_h4_i16", lambda s: hb_attention(16, 64, 4), (16, 64), quant="int16x8")

    add("audio", "conv1d_49x40", lambda s: hb_conv1d(s, "conv1d"), (49, 40))
    add("audio", "tcn_64x32", lambda s: hb_conv1d(s, "tcn"), (64, 32))
    add("audio", "dscnn_49x10_u8", lambda s: hb_conv1d(s, "dscnn"), (49, 10), input_type="uint8")
    add("audio", "dscnn_49x10_p50", lambda s: hb_conv1d(s, "dscnn"), (49, 10), weights="prune50")
    add("audio", "crnn_lstm_49x10", lambda s: hb_conv1d(s, "crnn"), (49, 10))
    add("audio", "crnn_gru_49x10_p50", lambda s: hb_conv1d(s, "crnn_gru"), (49, 10), weights="prune50")
    add("audio", "dscnn_dm2_49x10_s24", lambda s: hb_conv1d(s, "dscnn_dm2"), (49, 10), weights="2of4")
    add("audio", "conv1d_pool_128x8_i16", lambda s: hb_conv1d(s, "conv1d_pool"), (128, 8), quant="int16x8")

    add("detector", "yolo_96", lambda s: hb_detect(s, "yolo"), (96, 96, 3))
    add("detector", "ssd_96_p50", lambda s: hb_detect(s, "ssd"), (96, 96, 3), weights="prune50")
    add("detector", "centernet_96", lambda s: hb_detect(s, "centernet"), (96, 96, 3))
    add("detector", "blaze_prelu_64", lambda s: hb_detect(s, "blaze"), (64, 64, 3))
    add("detector", "fpn_nearest_96_s24", lambda s: hb_detect(s, "fpn"), (96, 96, 3), weights="2of4")
    add("detector", "yolo_96_u8", lambda s: hb_detect(s, "yolo"), (96, 96, 3), input_type="uint8")

    add("rnn", "lstm32_20x16", lambda s: hb_rnn(s, "lstm"), (20, 16))
    add("rnn", "lstm64x32_25x10", lambda s: hb_rnn(s, "lstm2"), (25, 10))
    add("rnn", "gru32_20x16", lambda s: hb_rnn(s, "gru"), (20, 16))
    add("rnn", "convlstm_50x13_p50", lambda s: hb_rnn(s, "convlstm"), (50, 13), weights="prune50")
    add("rnn", "bilstm24_16x8", lambda s: hb_rnn(s, "bilstm"), (16, 8))
    # No int16x8 LSTM: the converter refuses it ("Quantization to 16x8-bit not
    # yet supported for op: 'UNIDIRECTIONAL_SEQUENCE_LSTM'").
    add("rnn", "gru32_20x16_i16", lambda s: hb_rnn(s, "gru"), (20, 16), quant="int16x8")

    add("depthwise", "m2_48", lambda s: hb_depthwise(s, 2), (48, 48, 8))
    add("depthwise", "m4_k5_48", lambda s: hb_depthwise(s, 4, 5), (48, 48, 4))
    add("depthwise", "m2_k7_s2_64_p50", lambda s: hb_depthwise(s, 2, 7, 2), (64, 64, 3), weights="prune50")

    add("transpose_conv", "s2_32", lambda s: hb_transpose_conv(s, 2), (32, 32, 3))
    add("transpose_conv", "s21_32x16", lambda s: hb_transpose_conv(s, (2, 1)), (32, 16, 3))
    add("transpose_conv", "s2_k4_32_s24", lambda s: hb_transpose_conv(s, 2, 4), (32, 32, 3), weights="2of4")

    add("residual", "add_64", lambda s: hb_residual(s, "add"), (64, 64, 3))
    add("residual", "se_mul_64", lambda s: hb_residual(s, "se"), (64, 64, 3))
    add("residual", "csp_split_64", lambda s: hb_residual(s, "csp"), (64, 64, 3))
    add("residual", "add_64_i16", lambda s: hb_residual(s, "add"), (64, 64, 3), quant="int16x8")

    add("vgg", "w16_32", lambda s: hb_vgg(s), (32, 32, 3))
    add("vgg", "w32_48_u8_p50", lambda s: hb_vgg(s, (32, 64, 128), 64), (48, 48, 3), input_type="uint8",
        weights="prune50")

    add("large", "weights_64", lambda s: hb_large(s, "weights"), (64, 64, 3))
    add("large", "activations_192", lambda s: hb_large(s, "activations"), (192, 192, 3))


_corpus()


# --------------------------------------------------------------------------- #
# Conversion
# --------------------------------------------------------------------------- #

def convert(spec):
    import numpy as np
    import tensorflow as tf
    import tf_keras as keras
    keras.utils.set_random_seed(spec["seed"] % (2 ** 31))
    tf.config.experimental.enable_op_determinism()
    model = spec["build"](spec["shape"])
    apply_weights(model, spec["weights"], spec["seed"])
    rng = np.random.default_rng(spec["seed"] + 1)
    lo, hi = spec["input_range"]
    shape = (1,) + spec["shape"]

    def sample(n):
        return rng.uniform(lo, hi, size=(n,) + spec["shape"]).astype("float32")
    calibrate_batchnorm(model, sample(16))
    rep = [sample(1) for _ in range(16)]

    def representative():
        for r in rep:
            yield [r]
    # The concrete-function path (with the model as trackable object) gives the
    # same graph as from_keras_model, fused LSTMs included, without the slow
    # Keras SavedModel serialization of every layer.
    fn = tf.function(lambda x: model(x, training=False), input_signature=[tf.TensorSpec(shape, tf.float32)])
    conv = tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function()], model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = representative
    if spec["quant"] == "int16x8":
        conv.target_spec.supported_ops = [
            tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
        conv.inference_input_type = tf.int16
        conv.inference_output_type = tf.int16
    else:
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        conv.inference_input_type = tf.uint8 if spec["input_type"] == "uint8" else tf.int8
        conv.inference_output_type = tf.int8
    return conv.convert()


def cmd_generate(args):
    names = set(args.only or [])
    todo = [m["name"] for m in MODELS if not names or m["name"] in names]
    if args.shard:
        i, n = (int(v) for v in args.shard.split("/"))
        todo = todo[i::n]
    os.makedirs(args.out, exist_ok=True)
    todo = [n for n in todo if args.force or not os.path.exists(os.path.join(args.out, n + ".tflite"))]
    failed = []
    # Models are converted in a child process (TF state is reset between models
    # with clear_session); when the child dies, the model it was converting is
    # recorded as failed and a new child goes on with the rest.
    while todo:
        r = subprocess.run([sys.executable, __file__, "_batch", args.out] + todo, stdout=subprocess.PIPE,
                           text=True)
        done = [l.split()[1] for l in r.stdout.splitlines() if l.startswith("DONE ")]
        started = [l.split()[1] for l in r.stdout.splitlines() if l.startswith("START ")]
        for n in done:
            print("%-45s ok" % n, flush=True)
        if r.returncode == 0:
            break
        bad = started[-1] if started else todo[0]
        print("%-45s FAILED (%d)" % (bad, r.returncode), flush=True)
        failed.append(bad)
        todo = todo[todo.index(bad) + 1:]
    if failed:
        print("failed: " + " ".join(failed))
        return 1
    return 0


def cmd_batch(out, names):
    import tf_keras as keras
    for name in names:
        print("START " + name, flush=True)
        keras.backend.clear_session()
        spec = next(m for m in MODELS if m["name"] == name)
        data = convert(spec)
        path = os.path.join(out, name + ".tflite")
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.replace(path + ".tmp", path)
        print("DONE " + name, flush=True)
    return 0


# --------------------------------------------------------------------------- #
# Manifest
# --------------------------------------------------------------------------- #

def split_half(family):
    """The split rule: sha256(SPLIT_SALT + family) first byte, even -> fit."""
    return "fit" if hashlib.sha256((SPLIT_SALT + family).encode()).digest()[0] % 2 == 0 else "validate"


def describe(path):
    import tensorflow as tf
    it = tf.lite.Interpreter(model_path=path)
    ops = collections.Counter(o["op_name"] for o in it._get_ops_details())
    ins = [dict(shape=[int(v) for v in d["shape"]], dtype=d["dtype"].__name__) for d in it.get_input_details()]
    outs = [dict(shape=[int(v) for v in d["shape"]], dtype=d["dtype"].__name__) for d in it.get_output_details()]
    return dict(sorted(ops.items())), ins, outs


def tflite_invoke(paths):
    """Runs each model once in TensorFlow Lite's interpreter on random input, in
    a child process (some int16x8 kernels abort the process); returns
    {path: "ok" | "error: MESSAGE" | "crash (signal N)"}."""
    results, todo = {}, list(paths)
    while todo:
        r = subprocess.run([sys.executable, __file__, "_invoke"] + todo, capture_output=True, text=True)
        for line in r.stdout.splitlines():
            if line.startswith("RESULT "):
                _, p, status = line.split(" ", 2)
                results[p] = status
        if r.returncode == 0:
            break
        started = [l.split(" ", 1)[1] for l in r.stdout.splitlines() if l.startswith("START ")]
        bad = started[-1] if started else todo[0]
        results[bad] = "crash (signal %d)" % -r.returncode if r.returncode < 0 else "exit %d" % r.returncode
        todo = todo[todo.index(bad) + 1:]
    return results


def cmd_invoke(paths):
    import numpy as np
    import tensorflow as tf
    for path in paths:
        print("START " + path, flush=True)
        it = tf.lite.Interpreter(model_path=path)
        it.allocate_tensors()
        rng = np.random.default_rng(0)
        for d in it.get_input_details():
            info = np.iinfo(d["dtype"])
            it.set_tensor(d["index"],
                          rng.integers(info.min, info.max, size=d["shape"], endpoint=True).astype(d["dtype"]))
        try:
            it.invoke()
            status = "ok"
        except RuntimeError as e:
            status = "error: " + str(e).strip().splitlines()[0]
        print("RESULT %s %s" % (path, status), flush=True)
    return 0


def mica_status(mica, path):
    """Runs `mica inspect` and `mica check`; returns 'ok' or the first error line."""
    results = {}
    for what, argv in (("inspect", [mica, "inspect", path]),
                       ("check", [mica, "check", path, "--target-profile", "ethos-u55-256",
                                  "--target-profile", "cortex-m55",
                                  "--compatibility", "--performance"])):
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            results[what] = "timeout (300 s)"
            continue
        if r.returncode == 0:
            results[what] = "ok"
        else:
            lines = [l for l in (r.stderr + r.stdout).splitlines() if l.strip()]
            kind = "crash (signal %d)" % -r.returncode if r.returncode < 0 else "exit %d" % r.returncode
            results[what] = "%s: %s" % (kind, lines[-1] if lines else "(no output)")
    return results


WEIGHT_DOC = {
    "laplace": "Laplacian kernels (std sqrt(2/fan_in)), dense",
    "prune50": "Laplacian kernels, 50 % smallest magnitudes per tensor set to zero",
    "2of4": "Laplacian kernels, 2:4 structured (2 of every 4 consecutive input channels zero) in "
            "CONV/FC kernels; depthwise kernels 50 % unstructured",
}


def cmd_manifest(args):
    import tensorflow as tf
    entries = []
    paths = [os.path.join(args.out, m["name"] + ".tflite") for m in MODELS]
    invoked = tflite_invoke([p for p in paths if os.path.exists(p)])
    for spec in MODELS:
        path = os.path.join(args.out, spec["name"] + ".tflite")
        if not os.path.exists(path):
            continue
        data = open(path, "rb").read()
        ops, ins, outs = describe(path)
        e = dict(name=spec["name"], file=os.path.relpath(path, HERE), family=spec["family"],
                 variant=spec["variant"], quantization=spec["quant"], inputs=ins, outputs=outs,
                 ops=ops, op_count=sum(ops.values()), weights=spec["weights"],
                 weights_description=WEIGHT_DOC[spec["weights"]], seed=spec["seed"],
                 sha256=hashlib.sha256(data).hexdigest(), size=len(data),
                 tensorflow=tf.__version__, half=split_half(spec["family"]))
        e["tflite_invoke"] = invoked.get(path, "not run")
        if args.mica:
            e["mica_status"] = mica_status(args.mica, path)
        entries.append(e)
        print(e["name"], e["tflite_invoke"], e.get("mica_status", ""), flush=True)
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(dict(tensorflow=tf.__version__, generator="test/corpus/make_corpus.py",
                       models=entries), f, indent=1)
        f.write("\n")
    return 0


# The trained MLPerf Tiny int8 models of the shared reference folder: in the
# validation half by rule, referenced by path relative to that folder, never copied.
SHARED_VALIDATION = [
    "models/mlperf-tiny/ad_autoencoder_int8.tflite",
    "models/mlperf-tiny/ic_resnet8_int8.tflite",
    "models/mlperf-tiny/kws_ds_cnn_int8.tflite",
    "models/mlperf-tiny/vww_mobilenet_v1_025_int8.tflite",
]


def cmd_split(args):
    present = [m for m in MODELS if os.path.exists(os.path.join(args.out, m["name"] + ".tflite"))]
    families = sorted({m["family"] for m in present})
    halves = {h: dict(families=[f for f in families if split_half(f) == h],
                      models=[m["name"] for m in present if split_half(m["family"]) == h])
              for h in ("fit", "validate")}
    halves["validate"]["shared_models"] = SHARED_VALIDATION
    doc = dict(
        rule="half = 'fit' if sha256(salt + family)[0] %% 2 == 0 else 'validate', with family the "
             "architecture family of the manifest (UTF-8), salt = %r; the trained MLPerf Tiny int8 models of "
             "the shared folder are in the validation half by rule. Decided before any Vela run; the rule "
             "is never changed, models added later fall in the half of their family." % SPLIT_SALT,
        salt=SPLIT_SALT,
        family_half={f: split_half(f) for f in families},
        fit=halves["fit"], validate=halves["validate"])
    with open(os.path.join(HERE, "split.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    for h in ("fit", "validate"):
        print("%-8s %2d families, %3d models" % (h, len(halves[h]["families"]), len(halves[h]["models"])))
    return 0


def cmd_list(_args):
    for m in MODELS:
        print("%-45s %-20s %-8s %-6s %s" % (m["name"], m["family"], m["quant"], m["input_type"], m["weights"]))
    return 0


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "_invoke":
        return cmd_invoke(sys.argv[2:])
    if len(sys.argv) >= 2 and sys.argv[1] == "_batch":
        return cmd_batch(sys.argv[2], sys.argv[3:])
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--out", default=DEFAULT_OUT)
    g.add_argument("--only", nargs="*")
    g.add_argument("--shard")
    g.add_argument("--force", action="store_true")
    m = sub.add_parser("manifest")
    m.add_argument("--out", default=DEFAULT_OUT)
    m.add_argument("--mica")
    sp = sub.add_parser("split")
    sp.add_argument("--out", default=DEFAULT_OUT)
    sub.add_parser("list")
    args = p.parse_args()
    return {"generate": cmd_generate, "manifest": cmd_manifest, "split": cmd_split,
            "list": cmd_list}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
