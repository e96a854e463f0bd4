// QemuSimulator's fault cases with fake `qemu-system-arm` scripts (each failure one line), the
// runner transcript parser, and the bundle layout.
#include "mica/fvp/simulator.h"

#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "mica/device/bundle.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace fvp {
namespace {

namespace fs = std::filesystem;

const char kGoodRun[] =
    "qemu-system-arm: warning: nic lan9118.0 has no peer\n"
    "MICA begin board=mps3-an547 isa=mve\n"
    "MICA plan ops=2 arena=64 plan=512\n"
    "MICA op 0 CONV_2D 1000\n"
    "MICA op 1 SOFTMAX 20\n"
    "MICA total 1010\n"
    "MICA output 0 3 0a0bff\n"
    "MICA check 0 first=-1 diffs=0 maxdiff=0\n"
    "Test_result: PASS\n"
    "MICA end 0\n";

// Writes an executable fake simulator printing `stdout_text` then running `tail` (shell).
std::string FakeQemu(const std::string& dir, const std::string& name, const std::string& stdout_text,
                     const std::string& tail) {
  const std::string path = dir + "/" + name;
  std::ofstream f(path);
  f << "#!/bin/sh\ncat <<'MICA_EOF'\n" << stdout_text << "MICA_EOF\n" << tail << "\n";
  f.close();
  chmod(path.c_str(), 0755);
  return path;
}

struct Fixture {
  std::string dir = testing::TempDir("fake_qemu");
  std::string firmware = dir + "/runner.elf";
  Fixture() { std::ofstream(firmware) << "not really an ELF"; }
  absl::StatusOr<SimulationResult> Run(const std::string& program, absl::Duration timeout = absl::Seconds(20)) {
    QemuOptions o;
    o.program = program;
    o.firmware = firmware;
    o.timeout = timeout;
    SimulationRequest r;
    r.plan = {1, 2, 3};
    r.inputs = {{4, 5}};
    return QemuSimulator(o).Run(r);
  }
};

bool OneLine(const absl::Status& s) {
  return !s.ok() && std::string(s.message()).find('\n') == std::string::npos;
}

TEST_CASE("a good transcript parses", "[fvp][qemu]") {
  Fixture fx;
  auto r = fx.Run(FakeQemu(fx.dir, "qemu", kGoodRun, "exit 0"));
  REQUIRE(r.ok());
  CHECK(r->board == "mps3-an547");
  CHECK(r->isa == "mve");
  CHECK(r->ops == 2);
  CHECK(r->arena_bytes == 64);
  REQUIRE(r->op_counts.size() == 2);
  CHECK(r->op_counts[1].name == "SOFTMAX");
  CHECK(r->op_counts[0].instructions == 1000);
  CHECK(r->total_instructions == 1010);
  REQUIRE(r->outputs.size() == 1);
  CHECK(r->outputs[0] == std::vector<uint8_t>{0x0a, 0x0b, 0xff});
  REQUIRE(r->passed.has_value());
  CHECK(*r->passed);
}

TEST_CASE("a failed self-check reports the first differing index", "[fvp][qemu]") {
  auto r = ParseRunnerOutput(
      "MICA begin board=b isa=dsp\nMICA total 5\nMICA check 0 first=7 diffs=3 maxdiff=12\n"
      "Test_result: FAIL\nMICA end 1\n",
      "qemu");
  REQUIRE(r.ok());
  REQUIRE(r->passed.has_value());
  CHECK_FALSE(*r->passed);
  REQUIRE(r->checks.size() == 1);
  CHECK(r->checks[0].first_difference == 7);
  CHECK(r->checks[0].differences == 3);
  CHECK(r->checks[0].max_difference == 12);
}

TEST_CASE("qemu missing is a one-line error saying how to get it", "[fvp][qemu]") {
  Fixture fx;
  auto r = fx.Run("mica-no-such-qemu-system-arm");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(r.status().message()).find("apt-get install qemu-system-arm") != std::string::npos);
  CHECK(OneLine(r.status()));
}

TEST_CASE("missing firmware is a one-line error naming the preset", "[fvp][qemu]") {
  Fixture fx;
  QemuOptions o;
  o.program = FakeQemu(fx.dir, "qemu", kGoodRun, "exit 0");
  o.firmware = fx.dir + "/absent.elf";
  auto r = QemuSimulator(o).Run(SimulationRequest{});
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("--preset qemu-m55-mve") != std::string::npos);
  CHECK(OneLine(r.status()));
}

TEST_CASE("a crashing simulator is a one-line error", "[fvp][qemu]") {
  Fixture fx;
  auto r = fx.Run(FakeQemu(fx.dir, "qemu", "",
                           "echo 'qemu: fatal: Lockup: can not escalate 3 to HardFault' >&2\n"
                           "kill -ABRT $$"));
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("crashed") != std::string::npos);
  CHECK(std::string(r.status().message()).find("Lockup") != std::string::npos);
  CHECK(OneLine(r.status()));
}

TEST_CASE("a hanging simulator is killed at its time limit", "[fvp][qemu]") {
  Fixture fx;
  auto r = fx.Run(FakeQemu(fx.dir, "qemu", "MICA begin board=b isa=mve\n", "sleep 30"),
                  absl::Seconds(1));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(OneLine(r.status()));
}

TEST_CASE("truncated runner output is an error", "[fvp][qemu]") {
  Fixture fx;
  auto r = fx.Run(FakeQemu(fx.dir, "qemu",
                           "MICA begin board=b isa=mve\nMICA plan ops=2 arena=64 plan=512\n"
                           "MICA op 0 CONV_2D 1000\n",
                           "exit 0"));
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("truncated") != std::string::npos);
  CHECK(std::string(r.status().message()).find("MICA op 0 CONV_2D 1000") != std::string::npos);
  CHECK(OneLine(r.status()));
}

TEST_CASE("a simulator exiting 0 without the runner starting is an error", "[fvp][qemu]") {
  Fixture fx;
  auto r = fx.Run(FakeQemu(fx.dir, "qemu", "qemu-system-arm: warning: nic lan9118.0 has no peer\n",
                           "exit 0"));
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("never started") != std::string::npos);
  CHECK(OneLine(r.status()));
}

TEST_CASE("garbage in the runner's output is an error", "[fvp][qemu]") {
  Fixture fx;
  for (const char* garbage :
       {"MICA op zero CONV_2D 12\n", "MICA output 0 4 0a0b\n", "MICA total \x01\x02\n",
        "MICA frobnicate\n", "MICA check 0 first=1\n"}) {
    auto r = fx.Run(FakeQemu(fx.dir, "qemu",
                             std::string("MICA begin board=b isa=mve\n") + garbage +
                                 "MICA total 3\nMICA end 0\n",
                             "exit 0"));
    INFO(garbage);
    REQUIRE_FALSE(r.ok());
    CHECK(std::string(r.status().message()).find("garbage") != std::string::npos);
    CHECK(OneLine(r.status()));
  }
}

TEST_CASE("a runner error line is reported", "[fvp][qemu]") {
  Fixture fx;
  auto r = fx.Run(FakeQemu(fx.dir, "qemu",
                           "MICA begin board=b isa=mve\nMICA error plan rejected: plan checksum "
                           "mismatch\nMICA end 2\n",
                           "exit 2"));
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("plan checksum mismatch") != std::string::npos);
  CHECK(OneLine(r.status()));
}

TEST_CASE("bundles lay out plan, inputs and expected outputs 16-byte aligned", "[fvp]") {
  SimulationRequest r;
  r.plan = std::vector<uint8_t>(33, 7);
  r.inputs = {{1, 2, 3}};
  r.expected = {{9}};
  const std::vector<uint8_t> b = MakeBundle(r);
  device::BundleHeader h;
  std::memcpy(&h, b.data(), sizeof(h));
  CHECK(h.magic == device::kBundleMagic);
  CHECK(h.total_bytes == b.size());
  CHECK(h.plan_offset % 16 == 0);
  CHECK(h.plan_bytes == 33);
  CHECK(h.num_inputs == 1);
  CHECK(h.num_expected == 1);
  device::BundleEntry e[2];
  std::memcpy(e, b.data() + sizeof(h), sizeof(e));
  CHECK(e[0].offset % 16 == 0);
  CHECK(e[1].offset % 16 == 0);
  CHECK(b[e[0].offset + 2] == 3);
  CHECK(b[e[1].offset] == 9);
}

}  // namespace
}  // namespace fvp
}  // namespace mica
