// results.json through the typed records and back.
#include "results_json.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "config.h"

namespace leaky::gan {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string ReadText(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every committed study of lab version 3 or later, read into records and
// written again, is the same file byte for byte: the records hold every
// field. (Earlier versions' summaries lack the bootstrap interval.)
TEST(ResultsJson, CommittedStudiesRoundTripByteForByte) {
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(LEAKY_STUDY_DIR)) {
    const fs::path file = entry.path() / "results.json";
    if (!fs::exists(file)) continue;
    const std::string text = ReadText(file);
    const json j = json::parse(text);
    if (j["lab_version"] < 3) continue;
    const bool same = ToJson(ResultsFromJson(j)).dump(1) + "\n" == text;
    EXPECT_TRUE(same) << file;
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

// A lab-version-4 file (a 40-step run with PReLU, spectral norm and the
// hinge loss: provenance, KID, the floors' spread, f16 counts and PReLU
// slopes per run) round-trips byte for byte too.
TEST(ResultsJson, LabVersion4RoundTripsByteForByte) {
  const std::string text = ReadText(fs::path(LEAKY_GAN_TEST_DATA) / "v4-hinge-sn-prelu.json");
  const json j = json::parse(text);
  ASSERT_EQ(j["lab_version"], 4);
  ASSERT_TRUE(j.contains("provenance") && j["variants"][1].contains("prelu_slopes"));
  EXPECT_EQ(ToJson(ResultsFromJson(j)).dump(1) + "\n", text);
}

TEST(ResultsJson, AMissingKeyIsOneLineNamingIt) {
  const fs::path dir = fs::temp_directory_path() / "leaky-results-json-test";
  fs::create_directories(dir);
  json j = json::parse(ReadText(fs::path(LEAKY_STUDY_DIR) / "cross-w1-default" / "results.json"));
  j.erase("steps");
  std::ofstream(dir / "results.json") << j.dump();
  try {
    ReadResults(dir);
    ADD_FAILURE() << "a results.json without steps was read";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("is not a lab results.json"), std::string::npos) << message;
    EXPECT_NE(message.find("'steps'"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace leaky::gan
