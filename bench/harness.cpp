#include "bench/harness.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <sstream>
#include <stdexcept>

#include "core/hash.h"
#include "core/json.h"
#include "core/stats.h"

namespace convcheck {

namespace {

// Taps of one spatial dimension that land inside the input, summed over the output positions.
int64_t valid_taps(int64_t out, int64_t in, int64_t k, int64_t s, int64_t d, int64_t pad) {
  int64_t total = 0;
  for (int64_t i = 0; i < out; ++i)
    for (int64_t a = 0; a < k; ++a) {
      const int64_t r = i * s + a * d - pad;
      total += r >= 0 && r < in;
    }
  return total;
}

// A reproducible N(0,1) fill (benchmarks need realistic data, not exactness).
void fill_normal(Tensor& t, uint64_t seed) {
  uint64_t state = seed;
  auto next = [&] { return splitmix64_next(state); };
  for (int64_t i = 0; i < t.size(); ++i) {
    if (t.dtype() == DType::i32) {
      t.set(i, static_cast<double>(static_cast<int64_t>(next() % 17) - 8));
      continue;
    }
    const double u1 = ((next() >> 11) + 1) * 0x1p-53, u2 = (next() >> 11) * 0x1p-53;
    t.set(i, std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  }
}

std::string num(double v) {
  if (!std::isfinite(v)) return "null";
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}

std::string str(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o + "\"";
}

}  // namespace

int64_t nominal_flops(const Geometry& g) {
  return 2 * g.N * g.OH * g.OW * g.O * g.Cf * g.KH * g.KW;
}

int64_t useful_flops(const Geometry& g) {
  return 2 * g.N * valid_taps(g.OH, g.H, g.KH, g.sh, g.dh, g.pad_top) *
         valid_taps(g.OW, g.W, g.KW, g.sw, g.dw, g.pad_left) * g.O * g.Cf;
}

int64_t compulsory_bytes(const Problem& p, const Geometry& g) {
  const OpIO io = op_io(p.op);
  int64_t elements = 0;
  for (Role r : {io.a, io.b, io.result_like}) elements += role_elements(g, r);
  return elements * static_cast<int64_t>(dtype_size(p.dtype));
}

namespace {

// The median over rounds of num[r] / den[r] (both timed in round r), 0 when none; and its
// interval.
double paired(const std::vector<double>& num, const std::vector<double>& den,
              MedianInterval* interval) {
  std::vector<double> q;
  for (std::size_t r = 0; r < num.size() && r < den.size(); ++r)
    if (den[r] > 0) q.push_back(num[r] / den[r]);
  *interval = median_interval(q);
  return median(q);  // 0 when none
}

}  // namespace

MedianRank median_rank(std::size_t n) {
  if (n == 0) return {};
  // P(Binomial(n, 1/2) = j), in logs so that no term underflows for thousands of rounds.
  auto pmf = [n](std::size_t j) {
    const double dn = static_cast<double>(n), dj = static_cast<double>(j);
    return std::exp(std::lgamma(dn + 1) - std::lgamma(dj + 1) - std::lgamma(dn - dj + 1) -
                    dn * std::log(2.0));
  };
  // k = 1 always (min and max); k + 1 while its tail, P(B <= k), leaves 95 % or more.
  std::size_t k = 1;
  double tail = pmf(0);  // P(B <= k - 1)
  while (2 * k < n) {
    const double next = tail + pmf(k);
    if (1 - 2 * next < 0.95) break;
    tail = next;
    ++k;
  }
  return {k, 1 - 2 * tail};
}

MedianInterval median_interval(std::vector<double> v) {
  const std::size_t n = v.size();
  if (n == 0) return {};
  std::sort(v.begin(), v.end());
  const MedianRank r = median_rank(n);
  return {v[r.k - 1], v[n - r.k], r.level};
}

std::vector<BenchRecord> bench_problem(const Problem& p, const std::string& tag,
                                       const std::vector<Backend*>& backends,
                                       const BenchOptions& options,
                                       const std::vector<Peaks>& peaks) {
  const CheckedProblem checked(p);
  const Geometry& g = checked.geometry();
  const OpIO io = op_io(p.op);
  Tensor a(p.dtype, storage_shape(p, g, io.a), storage_layout(p, io.a));
  Tensor b(p.dtype, storage_shape(p, g, io.b), storage_layout(p, io.b));
  fill_normal(a, 1);
  fill_normal(b, 2);
  const ConstTensorView va = view(static_cast<const Tensor&>(a)),
                        vb = view(static_cast<const Tensor&>(b));
  Operands ops;
  ops.set(io.a, &va);
  ops.set(io.b, &vb);

  const int current = omp_get_max_threads();
  const std::vector<int> counts =
      options.threads.empty() ? std::vector<int>{current} : options.threads;
  if (peaks.size() != counts.size())
    throw std::logic_error("bench_problem: one Peaks per thread count");
  // Record k * B + i: thread count k, backend i.
  const std::size_t B = backends.size(), K = counts.size();
  std::vector<BenchRecord> records(K * B);
  std::vector<Tensor> results(B);
  std::vector<std::vector<double>> ms(K * B);
  for (std::size_t i = 0; i < B; ++i) {
    BenchRecord r;
    r.problem = to_string(p);
    r.tag = tag;
    r.backend = backends[i]->name();
    r.flops = nominal_flops(g);
    r.useful = useful_flops(g);
    r.bytes = compulsory_bytes(p, g);
    Status s = backends[i]->available();
    if (s.ok()) s = backends[i]->can_implement(checked);
    if (s.ok()) {
      results[i] =
          Tensor(p.dtype, storage_shape(p, g, io.result_like), storage_layout(p, io.result_like));
      r.ran = true;
    } else {
      r.reason = s.reason();
    }
    // A device backend's % of peak is against its device (measured once per process).
    const Backend::DevicePeaks dp = r.ran ? backends[i]->device_peaks() : Backend::DevicePeaks{};
    for (std::size_t k = 0; k < K; ++k) {
      BenchRecord& rk = records[k * B + i];
      rk = r;
      rk.threads = counts[k];
      rk.peak_gflops = peaks[k].fma_gflops;
      rk.bandwidth_gbs = peaks[k].bandwidth_gbs;
      if (!dp.device.empty()) {
        rk.device = dp.device;
        rk.peak_gflops = dp.fma_gflops;
        rk.bandwidth_gbs = dp.bandwidth_gbs;
      }
    }
  }
  // The round's footprint: what a round touches in host memory between two runs of one
  // backend, at least: the shared operands and every running backend's own result (a device
  // backend's too: it is copied back into results[i]). The problem's compulsory bytes stay in a
  // cache between a backend's runs only where all of that fits: on a 32 MiB L3 MobileNet dw1
  // backprop input's 26 MB do not, beside oneDNN's 13 MB result, and a triad over the 26 MB alone
  // (hot in L3) had set them a bar of up to 76 GB/s. Backends' scratch is not counted (unknown
  // here), so this is a lower bound.
  int64_t round_bytes = 0;
  for (std::size_t i = 0; i < B; ++i) {
    const BenchRecord& r = records[i];
    if (!r.ran || r.bytes <= 0) continue;
    // (the first one's result is in the compulsory bytes already)
    round_bytes = round_bytes == 0 ? r.bytes : round_bytes + int64_t(results[i].bytes());
  }
  // The triad at the round's footprint, per thread count that a CPU record ran at, read twice:
  // before the warm-up rounds (which bring the operands back into the caches it evicts) and after
  // the timed rounds; the higher counts (a reading taken while a neighbour, or a backend's threads
  // still spinning, held a CPU read half).
  auto footprint_triad = [&] {
    for (std::size_t k = 0; k < K; ++k) {
      double triad = -1;
      for (std::size_t i = 0; i < B; ++i) {
        BenchRecord& rk = records[k * B + i];
        if (!rk.ran || !rk.device.empty() || rk.bytes <= 0) continue;
        if (triad < 0) triad = triad_gbs(counts[k], round_bytes);
        rk.footprint_bytes = round_bytes;
        rk.footprint_bandwidth_gbs = std::max(rk.footprint_bandwidth_gbs, triad);
      }
    }
  };
  footprint_triad();
  // A run's time: the backend's device time when it reports one, else the wall clock. Its note
  // and ISA are kept per thread count (oneDNN may choose another implementation for another).
  auto run_once = [&](std::size_t i, BenchRecord& r) {
    const auto t0 = std::chrono::steady_clock::now();
    backends[i]->run(checked, ops, view(results[i]));
    const double wall =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    r.note = backends[i]->last_note();
    r.kernel_isa = backends[i]->isa();
    const double device = backends[i]->last_device_ms();
    if (!(device >= 0 && std::isfinite(device))) return wall;  // none (or a NaN or Inf reported)
    r.timing = "device";
    return device;
  };
  // Warm up each backend, then interleave the timed runs (every thread count, every backend, in
  // each round) so drift hits them all alike; every other round in reverse order (A B B A), so
  // that no backend or thread count always runs first after a switch. A backend that throws at
  // one thread count stops there only.
  struct RestoreThreads {
    int count;
    ~RestoreThreads() { omp_set_num_threads(count); }
  } restore{current};
  for (int round = -options.warmup; round < options.reps; ++round) {
    const bool reverse = (round + options.warmup) % 2 == 1;
    for (std::size_t kk = 0; kk < K; ++kk) {
      const std::size_t k = reverse ? K - 1 - kk : kk;
      omp_set_num_threads(counts[k]);
      for (std::size_t ii = 0; ii < B; ++ii) {
        const std::size_t i = reverse ? B - 1 - ii : ii;
        BenchRecord& r = records[k * B + i];
        if (!r.ran) continue;
        try {
          const double t = run_once(i, r);
          if (round >= 0) ms[k * B + i].push_back(t);
        } catch (const std::exception& e) {
          r.ran = false;
          r.reason = std::string("threw: ") + e.what();
        }
      }
    }
  }
  footprint_triad();
  for (std::size_t k = 0; k < K; ++k) {
    for (std::size_t i = 0; i < B; ++i) {
      BenchRecord& r = records[k * B + i];
      if (!r.ran) {  // (one that threw after the first triad reading: none, as for "not run")
        r.footprint_bytes = 0;
        r.footprint_bandwidth_gbs = 0;
        continue;
      }
      const std::vector<double>& v = ms[k * B + i];
      r.reps = static_cast<int>(v.size());
      r.times_ms = v;
      r.min_ms = *std::min_element(v.begin(), v.end());
      r.max_ms = *std::max_element(v.begin(), v.end());
      r.median_ms = median(v);
      const double s = r.median_ms / 1e3;
      r.gflops = static_cast<double>(r.flops) / s / 1e9;
      r.useful_gflops = static_cast<double>(r.useful) / s / 1e9;
      r.pct_peak = r.peak_gflops > 0 ? 100 * r.gflops / r.peak_gflops : 0;
      const double byte_rate = static_cast<double>(r.bytes) / s / 1e9;
      r.pct_bandwidth = r.bandwidth_gbs > 0 ? 100 * byte_rate / r.bandwidth_gbs : 0;
      r.pct_footprint_bandwidth =
          r.footprint_bandwidth_gbs > 0 ? 100 * byte_rate / r.footprint_bandwidth_gbs : 0;
      if (k > 0) {
        r.speedup_base = counts[0];
        if (records[i].ran) r.speedup = paired(ms[i], v, &r.speedup_interval);
      }
    }
    if (B < 2 || !records[k * B + 1].ran) continue;
    const BenchRecord& comparator = records[k * B + 1];
    for (std::size_t i = 0; i < B; ++i) {
      BenchRecord& r = records[k * B + i];
      if (!r.ran) continue;
      r.ratio = r.gflops / comparator.gflops;
      r.paired_ratio = paired(ms[k * B + 1], ms[k * B + i], &r.paired_interval);
    }
  }
  return records;
}

namespace {

std::string interval(const MedianInterval& m) {
  if (m.level <= 0) return "null";
  return "{\"lo\":" + num(m.lo) + ",\"hi\":" + num(m.hi) + ",\"level\":" + num(m.level) + "}";
}

}  // namespace

std::string bench_json(const BenchRecord& r, const Peaks& peaks) {
  std::ostringstream o;
  o << "{\"problem\":" << str(r.problem) << ",\"tag\":" << str(r.tag)
    << ",\"backend\":" << str(r.backend) << ",\"ran\":" << (r.ran ? "true" : "false")
    << ",\"reason\":" << str(r.reason) << ",\"median_ms\":" << num(r.median_ms)
    << ",\"min_ms\":" << num(r.min_ms) << ",\"max_ms\":" << num(r.max_ms)
    << ",\"gflops\":" << num(r.gflops) << ",\"useful_gflops\":" << num(r.useful_gflops)
    << ",\"pct_peak\":" << num(r.pct_peak) << ",\"pct_bandwidth\":" << num(r.pct_bandwidth)
    << ",\"ratio\":" << (r.ratio > 0 ? num(r.ratio) : "null")
    << ",\"paired_ratio\":" << (r.paired_ratio > 0 ? num(r.paired_ratio) : "null")
    << ",\"paired_ratio_interval\":" << interval(r.paired_interval)
    << ",\"speedup\":" << (r.speedup > 0 ? num(r.speedup) : "null")
    << ",\"speedup_interval\":" << interval(r.speedup_interval)
    << ",\"speedup_base_threads\":" << r.speedup_base << ",\"flops\":" << r.flops
    << ",\"useful_flops\":" << r.useful << ",\"bytes\":" << r.bytes << ",\"reps\":" << r.reps
    << ",\"threads\":" << r.threads << ",\"peak_gflops\":" << num(r.peak_gflops)
    << ",\"bandwidth_gbs\":" << num(r.bandwidth_gbs) << ",\"footprint_bytes\":"
    << (r.footprint_bytes > 0 ? std::to_string(r.footprint_bytes) : "null")
    << ",\"footprint_bandwidth_gbs\":"
    << (r.footprint_bandwidth_gbs > 0 ? num(r.footprint_bandwidth_gbs) : "null")
    << ",\"pct_footprint_bandwidth\":"
    << (r.pct_footprint_bandwidth > 0 ? num(r.pct_footprint_bandwidth) : "null")
    << ",\"isa\":" << str(peaks.isa) << ",\"avx2_peak_gflops\":" << num(peaks.avx2_gflops)
    << ",\"kernel_isa\":" << str(r.kernel_isa)
    << ",\"peaks\":" << str(r.device.empty() ? "cpu" : "device") << ",\"device\":" << str(r.device)
    << ",\"timing\":" << str(r.timing) << ",\"note\":" << str(r.note) << ",\"times_ms\":[";
  // Every digit (figures are recomputed from them); a non-finite time (a device backend's own
  // report) as null, as every other figure of the record.
  for (std::size_t j = 0; j < r.times_ms.size(); ++j)
    o << (j ? "," : "") << (std::isfinite(r.times_ms[j]) ? json::number(r.times_ms[j]) : "null");
  o << "]}";
  return o.str();
}

std::string bench_text_note(const BenchRecord& r) {
  if (!r.ran || (r.timing != "device" && r.device.empty() && r.note.empty())) return "";
  std::ostringstream o;
  o.precision(4);
  o << "               ";
  std::string sep;
  if (r.timing == "device") {
    o << "device time";
    sep = "; ";
  }
  if (!r.device.empty()) {
    o << sep << "% of " << r.device << ": " << r.peak_gflops << " GFLOP/s FMA, " << r.bandwidth_gbs
      << " GB/s";
    sep = "; ";
  }
  if (!r.note.empty()) o << sep << r.note;
  o << "\n";
  return o.str();
}

}  // namespace convcheck
