// libFuzzer target for the charting scripts' reader (toolkit/vega.h's
// LoadVegaScripts), which the GAN lab's report.html and `leaky bench`'s
// bench.html trust with the files in data/vega or $LEAKY_VEGA_DIR. The input
// becomes the three files of a private folder; the reader must either accept
// them, inlined in their order, or refuse them with `missing`: one line
// naming the folder, the first file that is not the pinned build and the fix
// (scripts/fetch_vega.sh), and nothing inlined. The first byte says how:
//   mode 0 (low bits 00): the rest split into the three files by two 16-bit
//          little-endian lengths; bits 2-4 leave a file out, bits 5-7 put a
//          folder in its place;
//   mode 1 (01): the rest is one file (bits 2-7 pick which), the other two
//          copied from data/vega;
//   mode 2 (10): a file of data/vega (bits 2-7 pick which) truncated at the
//          32-bit offset that follows, or the bytes after it written over it
//          from there: a short or damaged script;
//   mode 3 (11): data/vega's three files as they are.
// When data/vega's files are the pinned builds (the reader accepts that
// folder), the reader must accept exactly the inputs equal to them and name
// the first file that differs; without them, it must accept none. Any other
// outcome, crash or sanitizer report is a bug.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "vega.h"

namespace {

namespace fs = std::filesystem;

// The reader's files, in the order it inlines them.
constexpr const char* kFiles[] = {"vega.min.js", "vega-lite.min.js", "vega-embed.min.js"};

[[noreturn]] void Bug(const std::string& what) {
  std::fprintf(stderr, "vega_scripts_fuzz: %s\n", what.c_str());
  std::abort();
}

// data/vega's files (DefaultVegaDir()), read once, and whether the reader
// accepts that folder (they are then the pinned builds).
struct Real {
  std::optional<std::string> files[3];
  bool pinned = false;
};

const Real& RealScripts() {
  static const Real real = [] {
    Real r;
    const std::string dir = leaky::toolkit::DefaultVegaDir();
    for (int k = 0; k < 3; ++k) {
      const fs::path path = fs::path(dir) / kFiles[k];
      std::error_code error;
      if (!fs::is_regular_file(path, error)) continue;
      std::ifstream in(path, std::ios::binary);
      if (in) r.files[k] = std::string(std::istreambuf_iterator<char>(in), {});
    }
    r.pinned = leaky::toolkit::LoadVegaScripts(dir).ok();
    return r;
  }();
  return real;
}

// One file of the folder: left out, a folder in its place, or bytes (a view
// of the input, of data/vega's file or of a changed copy of it).
struct Entry {
  enum Kind { kAbsent, kFolder, kBytes } kind = kAbsent;
  std::string_view bytes;
};

Entry RealEntry(int k) {
  const auto& file = RealScripts().files[k];
  return file ? Entry{Entry::kBytes, *file} : Entry{};
}

// The reader's rule for inlining, said another way: each "</script" (which
// would end the element early) becomes "<\/script".
std::string ScriptSafe(std::string_view text) {
  std::string out;
  for (size_t at; (at = text.find("</script")) != std::string_view::npos;
       text.remove_prefix(at + 2)) {
    out.append(text.substr(0, at));
    out += "<\\/";
  }
  out.append(text);
  return out;
}

// What the previous input left at a path.
struct Placed {
  bool known = false;
  Entry::Kind kind = Entry::kAbsent;
  std::string bytes;
};

// Puts `entry` at `path`, unless the previous input left it there already
// (the copies of data/vega's files are most of a megabyte).
void Place(const fs::path& path, const Entry& entry, Placed& last) {
  if (last.known && last.kind == entry.kind && last.bytes == entry.bytes) return;
  fs::remove_all(path);
  if (entry.kind == Entry::kFolder) {
    fs::create_directory(path);
  } else if (entry.kind == Entry::kBytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(entry.bytes.data(), static_cast<std::streamsize>(entry.bytes.size()));
    if (!out) Bug("cannot write " + path.string());
  }
  last.known = true;
  last.kind = entry.kind;
  last.bytes.assign(entry.bytes);
}

// The private folder of this process, removed at its exit.
const fs::path& Folder() {
  static const fs::path dir = [] {
    const fs::path d =
        fs::temp_directory_path() / ("vega_scripts_fuzz." + std::to_string(getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

void RemoveFolder() {
  std::error_code error;
  fs::remove_all(Folder(), error);
}

// Whether `entry` is data/vega's file k, when those are the pinned builds.
bool Pinned(const Entry& entry, int k) {
  const Real& real = RealScripts();
  return real.pinned && entry.kind == Entry::kBytes && real.files[k] &&
         entry.bytes == *real.files[k];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // atexit after the folder is made: it runs before the path is destroyed.
  static const bool cleanup = (Folder(), std::atexit(RemoveFolder) == 0);
  (void)cleanup;
  const fs::path& dir = Folder();
  static Placed last[3];
  const Real& real = RealScripts();

  size_t at = std::min<size_t>(1, size);  // past the first byte
  auto take = [&](int bytes) {
    uint32_t value = 0;
    for (int i = 0; i < bytes && at < size; ++i, ++at) value |= uint32_t{data[at]} << (8 * i);
    return value;
  };
  const char* text = reinterpret_cast<const char*>(data);
  const uint8_t head = size > 0 ? data[0] : 0;
  Entry entries[3] = {RealEntry(0), RealEntry(1), RealEntry(2)};
  switch (head & 3) {
    case 0: {
      const size_t lengths[2] = {take(2), take(2)};
      for (int k = 0; k < 3; ++k) {
        const size_t n = k < 2 ? std::min(lengths[k], size - at) : size - at;
        entries[k] = Entry{Entry::kBytes, std::string_view(text + at, n)};
        at += n;
        if (head & (4 << k)) {
          entries[k] = Entry{};
        } else if (head & (32 << k)) {
          entries[k] = Entry{Entry::kFolder, ""};
        }
      }
      break;
    }
    case 1:
      entries[(head >> 2) % 3] = Entry{Entry::kBytes, std::string_view(text + 1, size - 1)};
      break;
    case 2: {
      // A changed copy, its buffer kept from input to input.
      static std::string changed;
      Entry& entry = entries[(head >> 2) % 3];
      const uint32_t offset = take(4);
      const std::string_view rest(text + at, size - at);
      changed.assign(entry.bytes);
      const size_t from = offset % (changed.size() + 1);
      if (rest.empty()) {
        changed.resize(from);
      } else {
        changed.replace(from, rest.size(), rest);
      }
      entry = Entry{Entry::kBytes, changed};
      break;
    }
    default:
      break;
  }
  for (int k = 0; k < 3; ++k) Place(dir / kFiles[k], entries[k], last[k]);

  const leaky::toolkit::VegaScripts scripts = leaky::toolkit::LoadVegaScripts(dir.string());
  // Which files are the pinned builds, known when data/vega's are.
  int first_other = -1;
  for (int k = 0; k < 3 && first_other < 0; ++k) {
    if (!Pinned(entries[k], k)) first_other = k;
  }
  if (scripts.ok()) {
    if (first_other >= 0) {
      Bug(std::string("accepted ") + kFiles[first_other] +
          (real.pinned ? ", which is not the pinned build" : " without the pinned builds known"));
    }
    std::string expected;
    expected.reserve(scripts.scripts.size());
    for (const Entry& entry : entries) {
      expected += "<script>";
      expected += ScriptSafe(entry.bytes);
      expected += "</script>\n";
    }
    if (scripts.scripts != expected) Bug("accepted the pinned builds but inlined other text");
    return 0;
  }
  const std::string& missing = scripts.missing;
  if (!scripts.scripts.empty()) Bug("refused (" + missing + ") but inlined scripts all the same");
  if (missing.find('\n') != std::string::npos) Bug("a refusal of more than one line: " + missing);
  if (missing.find("scripts/fetch_vega.sh") == std::string::npos) {
    Bug("a refusal without the fix (scripts/fetch_vega.sh): " + missing);
  }
  if (missing.find(dir.string()) == std::string::npos) {
    Bug("a refusal without the folder: " + missing);
  }
  int named = -1;
  for (int k = 0; k < 3; ++k) {
    if (missing.find(kFiles[k]) == std::string::npos) continue;
    if (named >= 0) Bug("a refusal naming two files: " + missing);
    named = k;
  }
  if (named < 0) Bug("a refusal naming no file: " + missing);
  if (real.pinned) {
    if (first_other < 0) Bug("refused the pinned builds: " + missing);
    if (named != first_other) {
      Bug(std::string("a refusal naming ") + kFiles[named] + ", not " + kFiles[first_other] +
          " (the first that differs): " + missing);
    }
    // A file that is there but differs is damaged; one that is not, missing.
    const bool there = entries[first_other].kind == Entry::kBytes;
    const char* says = there ? "is damaged" : "are not in";
    if (missing.find(says) == std::string::npos) {
      Bug(std::string("a refusal that does not say ") + kFiles[first_other] + " " + says + ": " +
          missing);
    }
  }
  return 0;
}
