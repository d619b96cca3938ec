# The results library's sources, one list for its two builds: the lab's
# (gan/CMakeLists.txt) and the fuzz target that replays results.json files
# in the builds without LibTorch (tests/fuzz/CMakeLists.txt).
set(leaky_gan_results_sources config.cc precision.cc summary.cc merge.cc results_json.cc
  claims_json.cc stats.cc measures.cc claims.cc tables.cc charts.cc grid_ink.cc report.cc)
list(TRANSFORM leaky_gan_results_sources PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
