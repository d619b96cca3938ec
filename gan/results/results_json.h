// The edge between the lab's records and JSON: results.json written and
// read, and the precision table of `leaky precision --json`. JSON objects'
// keys come out sorted (nlohmann::json's default), so the file is the same
// whatever order the records are filled in.
#ifndef LEAKY_GAN_RESULTS_JSON_H_
#define LEAKY_GAN_RESULTS_JSON_H_

#include <nlohmann/json.hpp>

#include <filesystem>
#include <limits>
#include <stdexcept>

#include "records.h"

namespace leaky::gan {

// A whole number of type T (int, long long) from JSON, else
// std::invalid_argument: nlohmann's get<int>() converts any number, and is
// undefined beyond int's range (the results.json fuzzer found a seed of
// 1.2e126).
template <class T>
T WholeNumber(const nlohmann::json& j) {
  if (!j.is_number_integer()) {
    throw std::invalid_argument("a whole number was expected, not " + j.dump());
  }
  const auto v = j.is_number_unsigned() ? static_cast<long double>(j.get<unsigned long long>())
                                        : static_cast<long double>(j.get<long long>());
  if (v < static_cast<long double>(std::numeric_limits<T>::min()) ||
      v > static_cast<long double>(std::numeric_limits<T>::max())) {
    throw std::invalid_argument(j.dump() + " is out of range");
  }
  return static_cast<T>(v);
}

// The ...FromJson functions throw nlohmann::json::exception when a key is
// missing or of another type, std::invalid_argument when a whole number is
// not one.
nlohmann::json ToJson(const Results& results);
Results ResultsFromJson(const nlohmann::json& j);
nlohmann::json ToJson(const Claim& claim);
Claim ClaimFromJson(const nlohmann::json& j);
nlohmann::json ToJson(const PrecisionTable& table);
nlohmann::json PrecisionRowJson(const PrecisionRow& row);
PrecisionRow PrecisionRowFrom(const nlohmann::json& j);
// A run's f16 counts per probe step and its PReLU slopes (lab version 4).
nlohmann::json PrecisionPointsJson(const std::vector<PrecisionPoint>& points);
std::vector<PrecisionPoint> PrecisionPointsFrom(const nlohmann::json& j);
nlohmann::json PreluSlopesJson(const PreluSlopes& slopes);
PreluSlopes PreluSlopesFrom(const nlohmann::json& j);
PrecisionTable PrecisionFromJson(const nlohmann::json& j);

// One finished run, as a resumable lab keeps it beside the run's files
// (the same fields as its entry in results.json, so a resumed study writes
// the same bytes).
nlohmann::json ToJson(const Run& run);
Run RunFromJson(const nlohmann::json& j);
// A run's logged rows, quality points and probes so far (a checkpoint's).
nlohmann::json HistoryJson(const std::vector<Row>& rows, const std::vector<QualityPoint>& quality,
                           const std::vector<Probe>& probes,
                           const std::vector<PrecisionPoint>& precision);
void HistoryFromJson(const nlohmann::json& j, std::vector<Row>* rows,
                     std::vector<QualityPoint>* quality, std::vector<Probe>* probes,
                     std::vector<PrecisionPoint>* precision);

// `dir`/results.json. Throws std::runtime_error with one line when there is
// none or it is not the lab's.
Results ReadResults(const std::filesystem::path& dir);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_RESULTS_JSON_H_
