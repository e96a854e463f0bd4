// mica — structural comparison of two Graphs.
//
// GraphDifference compares everything a model means: subgraphs, tensors (name, dtype, shape,
// shape signature, quantization, variable flag, constant bytes), operators (kind, name,
// version, attributes, inputs, outputs, intermediates), graph inputs/outputs, description and
// metadata. It ignores where a graph came from (source path and format) and how its constant
// bytes are stored.
//
//   MICA_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, mica::WriteTflite(g));
//   ... reload as g2 ...
//   if (std::string diff = mica::GraphDifference(g, g2); !diff.empty()) { ... }
#ifndef MICA_TEST_TESTING_COMPARE_H_
#define MICA_TEST_TESTING_COMPARE_H_

#include <string>

#include "mica/model/graph.h"

namespace mica {

// Returns "" when `a` and `b` are equal, else a one-line description of the first difference
// ("subgraph 0, tensor 3 ('w'): shape [8,3,3,1] vs [8,3,3,2]").
std::string GraphDifference(const Graph& a, const Graph& b);

}  // namespace mica

#endif  // MICA_TEST_TESTING_COMPARE_H_
