// Run-time choice of the kernels (dispatch.h): CPU + OS features from core/cpu.h, the cap from
// CONVCHECK_OPTIMIZED_ISA or limit_isa(), and one kernel table per ISA built lazily, only for an
// ISA the machine can execute.
#include "optimized/dispatch.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "core/cpu.h"

namespace convcheck::opt {

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::generic:
      return "generic";
    case Isa::avx2:
      return "avx2";
    case Isa::avx512:
      return "avx512";
  }
  return "?";
}

namespace {

constexpr Isa kAllIsas[] = {Isa::generic, Isa::avx2, Isa::avx512};

bool compiled(Isa isa) {
  switch (isa) {
    case Isa::generic:
      return true;
    case Isa::avx2:
#if defined(CONVCHECK_OPT_HAVE_AVX2)
      return true;
#else
      return false;
#endif
    case Isa::avx512:
#if defined(CONVCHECK_OPT_HAVE_AVX512)
      return true;
#else
      return false;
#endif
  }
  return false;
}

bool machine_runs(Isa isa) {
  switch (isa) {
    case Isa::generic:
      return true;
    case Isa::avx2:
      return cpu_features().avx2_usable();
    case Isa::avx512:
      // (emulated: AVX2 instructions, kernels_avx512.cpp's flags)
      return isa_emulated(Isa::avx512) ? cpu_features().avx2_usable()
                                       : cpu_features().avx512_usable();
  }
  return false;
}

bool supported(Isa isa) {
  return compiled(isa) && machine_runs(isa);
}

std::string isa_list(bool (*keep)(Isa)) {
  std::string s;
  for (Isa isa : kAllIsas)
    if (keep(isa)) s += (s.empty() ? "" : " ") + isa_label(isa);
  return s;
}

// CONVCHECK_OPTIMIZED_ISA parsed: nullopt when unset (or unknown: isa_request() reports that).
std::optional<Isa> env_cap() {
  const char* s = std::getenv("CONVCHECK_OPTIMIZED_ISA");
  if (s == nullptr) return std::nullopt;
  for (Isa isa : kAllIsas)  // (an emulated ISA answers to its label too: avx512-emulated)
    if (!std::strcmp(s, isa_name(isa)) || s == isa_label(isa)) return isa;
  return std::nullopt;
}

std::atomic<int> g_limit{-1};  // -1: not set by limit_isa()

// One table set per ISA, built on first use. Only table_set(isa) for an isa with supported(isa)
// is ever called (active_isa() guarantees it; checked again here), so the avx2/avx512 files'
// code runs only on machines that execute it.
struct TableSet {
  KernelTable<float> f32;
  KernelTable<double> f64;
  KernelTable<uint32_t> u32;  // int32's wrapping kernels: generic in every set
};

const TableSet& generic_set() {
  static const TableSet t = [] {
    TableSet s;
    generic_tables(&s.f32, &s.f64, &s.u32);
    return s;
  }();
  return t;
}

// The generic tables with one vector ISA's kernels filled in over them, built on first use.
template <void (*Fill)(KernelTable<float>*, KernelTable<double>*)>
const TableSet& vector_set() {
  static const TableSet t = [] {
    TableSet s = generic_set();
    Fill(&s.f32, &s.f64);
    return s;
  }();
  return t;
}

const TableSet& table_set(Isa isa) {
  if (!supported(isa))  // unreachable through active_isa(); a guard against a future caller
    throw std::logic_error(std::string("optimized: the ") + isa_name(isa) +
                           " kernels were requested on a machine that cannot run them");
  switch (isa) {
    case Isa::generic:
      break;
    case Isa::avx2:
#if defined(CONVCHECK_OPT_HAVE_AVX2)
      return vector_set<avx2_tables>();
#else
      break;
#endif
    case Isa::avx512:
#if defined(CONVCHECK_OPT_HAVE_AVX512)
      return vector_set<avx512_tables>();
#else
      break;
#endif
  }
  return generic_set();
}

}  // namespace

bool isa_emulated(Isa isa) {
#if defined(CONVCHECK_OPT_AVX512_EMULATED)
  return isa == Isa::avx512;
#else
  (void)isa;
  return false;
#endif
}

std::string isa_label(Isa isa) {
  return std::string(isa_name(isa)) + (isa_emulated(isa) ? "-emulated" : "");
}

std::vector<Isa> compiled_isas() {
  std::vector<Isa> out;
  for (Isa isa : kAllIsas)
    if (compiled(isa)) out.push_back(isa);
  return out;
}

std::vector<Isa> available_isas() {
  std::vector<Isa> out;
  for (Isa isa : kAllIsas)
    if (supported(isa)) out.push_back(isa);
  return out;
}

void limit_isa(Isa isa) {
  g_limit.store(static_cast<int>(isa));
}

void clear_isa_limit() {
  g_limit.store(-1);
}

Isa active_isa() {
  static const std::optional<Isa> env = env_cap();
  const int set = g_limit.load();
  // (Unasked, the widest ISA that is not emulated: an emulated one is for tests, and slow.)
  const Isa widest = isa_emulated(Isa::avx512) ? Isa::avx2 : Isa::avx512;
  const Isa cap = set >= 0 ? static_cast<Isa>(set) : env.value_or(widest);
  for (Isa isa : {Isa::avx512, Isa::avx2})
    if (static_cast<int>(isa) <= static_cast<int>(cap) && supported(isa)) return isa;
  return Isa::generic;
}

Status isa_request() {
  const char* s = std::getenv("CONVCHECK_OPTIMIZED_ISA");
  if (s == nullptr) return Status::Ok();
  const std::string v = s;
  const std::string runs = "this machine runs: " + isa_list(supported);
  const std::optional<Isa> cap = env_cap();
  if (!cap)
    return Status::Error(
        "CONVCHECK_OPTIMIZED_ISA='" + v +
        "' is not an ISA of the optimized backend (known: generic, avx2, avx512; " + runs + ")");
  if (!compiled(*cap))
    return Status::Error("CONVCHECK_OPTIMIZED_ISA=" + v + ": this build has no " + v +
                         " kernels (compiled: " + isa_list(compiled) + ")");
  if (!machine_runs(*cap))
    return Status::Error("CONVCHECK_OPTIMIZED_ISA=" + v + ": this CPU cannot run the " + v +
                         " kernels (CPU: " + cpu_features().describe() + "; " + runs +
                         "); unset it or name one of those");
  return Status::Ok();
}

std::string isa_summary() {
  const char* env = std::getenv("CONVCHECK_OPTIMIZED_ISA");
  return isa_label(active_isa()) + " (compiled: " + isa_list(compiled) +
         "; this machine runs: " + isa_list(supported) + "; CONVCHECK_OPTIMIZED_ISA" +
         (env ? std::string("=") + env : std::string(" unset")) + ")";
}

template <>
const KernelTable<float>& kernels<float>() {
  return table_set(active_isa()).f32;
}
template <>
const KernelTable<double>& kernels<double>() {
  return table_set(active_isa()).f64;
}
template <>
const KernelTable<uint32_t>& kernels<uint32_t>() {
  return generic_set().u32;
}

}  // namespace convcheck::opt
