// Guarded runs (design §6.2): every buffer a backend sees sits between guard bands of a known
// pattern, operands are checked for modification, and the result starts poisoned, so an
// out-of-bounds write, a write to an operand, or an element never written is a verdict rather than
// silent corruption.
//
// Readable guard bands cannot see a read, so a backend that reads the caller's memory in this
// process (Backend::reads_caller_memory) is then run twice more on page-guarded copies: every
// buffer (both operands and the result) in its own anonymous mapping, first with its start right
// after a PROT_NONE page, then with its end flush against one (aligned to the element size only:
// the Backend interface promises no more). A touch of a guard page is caught by a SIGSEGV handler
// that works on any thread (OpenMP workers included): it records the address and whether it was a
// write, opens the page (zero-filled: read-only for a read, read-write for a write) and returns,
// so the faulting instruction runs again and the backend finishes; the run is then
// `out_of_bounds`, naming the role and the side. A fault anywhere else goes to the handler that
// was installed before (by default the process dies of the signal, as without us).
//   Assumptions: the handler is installed while a pass runs and the previous one restored after
// (reference counted, so concurrent passes on several threads are fine; a handler someone else
// installs on top meanwhile is left alone); mprotect from a signal handler is a plain system call
// on Linux; a case whose buffers exceed kPageGuardedBytes (core/limits.h) is not copied, and its
// record's reason says the passes were skipped, as when CONVCHECK_PAGE_GUARDS=off (for CPU
// emulators that do not honour masked loads' fault suppression: qemu 7.2's AVX2 vmaskmovps reads
// the masked-out lanes, so the optimized backend's tails fault there and nowhere natively).
// Device backends and plugins are left out: their kernels read device mirrors or a child
// process's copies (plugins/runner.cpp places those against guard pages itself).
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>

#include "core/limits.h"
#include "oracle/internal.h"

namespace convcheck::oracle_detail {

namespace {

constexpr std::size_t kGuard = 256;  // bytes on each side; a multiple of 64 keeps data aligned
constexpr unsigned char kGuardByte = 0xA5;

// Poison for unwritten elements: a signalling NaN in the float types (no arithmetic produces it),
// an unlikely integer for int32.
void poison(void* data, DType t, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    switch (t) {
      case DType::f16:
        static_cast<uint16_t*>(data)[i] = 0x7D5A;
        break;
      case DType::bf16:
        static_cast<uint16_t*>(data)[i] = 0x7FA5;
        break;
      case DType::f32:
        static_cast<uint32_t*>(data)[i] = 0x7FA5A5A5u;
        break;
      case DType::f64:
        static_cast<uint64_t*>(data)[i] = 0x7FF4A5A5A5A5A5A5ull;
        break;
      case DType::i32:
        static_cast<uint32_t*>(data)[i] = 0x5A5AA5A5u;
        break;
    }
  }
}

class Guarded {
 public:
  explicit Guarded(std::size_t bytes)
      : bytes_(bytes), storage_((2 * kGuard + bytes + 63) / 8 + 8, 0) {
    unsigned char* b = base();
    std::memset(b, kGuardByte, kGuard);
    std::memset(b + kGuard + bytes_, kGuardByte, kGuard);
  }
  void* data() { return base() + kGuard; }
  // The first damaged guard byte as an offset from the data (negative: before it), or 0 if intact.
  long damage() {
    const unsigned char* b = base();
    for (std::size_t i = 0; i < kGuard; ++i)
      if (b[i] != kGuardByte) return static_cast<long>(i) - static_cast<long>(kGuard);
    for (std::size_t i = 0; i < kGuard; ++i)
      if (b[kGuard + bytes_ + i] != kGuardByte) return static_cast<long>(bytes_ + i) + 1;
    return 0;
  }

 private:
  unsigned char* base() {
    auto a = reinterpret_cast<uintptr_t>(storage_.data());
    return reinterpret_cast<unsigned char*>((a + 63) & ~uintptr_t{63});
  }
  std::size_t bytes_;
  std::vector<uint64_t> storage_;
};

bool same_bits(const void* a, const void* b, std::size_t n) {
  return n == 0 || !std::memcmp(a, b, n);
}

// Calls the backend; false (with run.check and run.error set) when it threw.
bool call_backend(Backend& b, const CheckedProblem& checked, const Operands& ops,
                  const TensorView& vr, Run& run) {
  try {
    b.run(checked, ops, vr);
  } catch (const GuardViolation& e) {
    // A device backend saw its kernel write into a guard band or an operand (checked on its
    // copies).
    run.check = e.check();
    run.error = e.what();
    return false;
  } catch (const Timeout& e) {  // an out-of-process backend (plugins/) hung and was killed
    run.check = "timeout";
    run.error = e.what();
    return false;
  } catch (const Crash& e) {  // an out-of-process backend died; the text names the signal
    run.check = "crashed";
    run.error = e.what();
    return false;
  } catch (const std::exception& e) {
    run.check = "crashed";
    run.error = std::string("the backend threw: ") + e.what();
    return false;
  } catch (...) {
    run.check = "crashed";
    run.error = "the backend threw a non-standard exception";
    return false;
  }
  return true;
}

// ---- page-guarded passes (see the file comment) ----

std::atomic<uintptr_t> g_page{0};  // the page size, set before the handler is installed

// The guard pages of the passes in progress, watched by the handler: lock-free atomics only.
constexpr int kWatchSlots = 96;  // six guard pages a pass: sixteen passes at once
struct Watch {
  std::atomic<int> busy{0};        // claimed by a pass
  std::atomic<uintptr_t> page{0};  // the guard page's address once armed; 0: not watched
  std::atomic<uintptr_t> hit{0};   // the first faulting address in it; 0: none
  std::atomic<int> write{-1};      // that fault: 1 a write, 0 a read, -1 unknown
  std::atomic<int> opened{0};      // 0 PROT_NONE, 1 opened read-only, 2 opened read-write
};
Watch g_watch[kWatchSlots];

std::mutex g_install_mu;
int g_installed = 0;             // passes in progress (under g_install_mu)
struct sigaction g_previous {};  // the SIGSEGV action before ours

// 1 write, 0 read, -1 unknown (x86-64: the page-fault error code's bit 1).
int access_of(void* context) {
#if defined(__x86_64__)
  const auto* uc = static_cast<const ucontext_t*>(context);
  return (uc->uc_mcontext.gregs[REG_ERR] & 2) ? 1 : 0;
#else
  (void)context;
  return -1;
#endif
}

void on_segv(int sig, siginfo_t* si, void* context) {
  const int saved_errno = errno;
  const uintptr_t page_bytes = g_page.load();
  const uintptr_t a = reinterpret_cast<uintptr_t>(si->si_addr);
  const uintptr_t page = page_bytes ? a & ~(page_bytes - 1) : 0;
  for (Watch& w : g_watch) {
    if (page == 0 || w.page.load() != page) continue;
    const int access = access_of(context);
    uintptr_t none = 0;
    if (w.hit.compare_exchange_strong(none, a)) w.write.store(access);
    // Open the page so that the instruction succeeds when it runs again; a fault on a page
    // already open for reading was a write.
    const int open = access == 1 || w.opened.load() >= 1 ? 2 : 1;
    mprotect(reinterpret_cast<void*>(page), page_bytes,
             open == 2 ? PROT_READ | PROT_WRITE : PROT_READ);
    w.opened.store(open);
    errno = saved_errno;
    return;
  }
  errno = saved_errno;
  // Not ours: what would have happened without us.
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction) g_previous.sa_sigaction(sig, si, context);
  } else if (g_previous.sa_handler == SIG_DFL || g_previous.sa_handler == SIG_IGN) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, nullptr);  // the faulting instruction runs again and the process dies
  } else {
    g_previous.sa_handler(sig);
  }
}

// One pass's watch: installs the handler (reference counted) and arms its guard pages.
class Watching {
 public:
  Watching() {
    std::lock_guard<std::mutex> lock(g_install_mu);
    if (g_installed++ == 0) {
      g_page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
      struct sigaction sa {};
      sa.sa_sigaction = on_segv;
      sa.sa_flags = SA_SIGINFO;
      sigemptyset(&sa.sa_mask);
      sigaction(SIGSEGV, &sa, &g_previous);
    }
  }
  ~Watching() {
    for (int i : slots_) {
      g_watch[i].page.store(0);
      g_watch[i].busy.store(0);
    }
    std::lock_guard<std::mutex> lock(g_install_mu);
    if (--g_installed == 0) {
      struct sigaction now {};
      sigaction(SIGSEGV, nullptr, &now);
      // Restore the previous action unless someone installed theirs on top of ours meanwhile.
      if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_segv)
        sigaction(SIGSEGV, &g_previous, nullptr);
    }
  }
  Watching(const Watching&) = delete;
  Watching& operator=(const Watching&) = delete;

  // Arms a guard page; false when every slot is taken. Returns its slot in `slot`.
  bool arm(uintptr_t page, int& slot) {
    for (int i = 0; i < kWatchSlots; ++i) {
      int free = 0;
      if (!g_watch[i].busy.compare_exchange_strong(free, 1)) continue;
      g_watch[i].hit.store(0);
      g_watch[i].write.store(-1);
      g_watch[i].opened.store(0);
      g_watch[i].page.store(page);
      slots_.push_back(i);
      slot = i;
      return true;
    }
    return false;
  }

 private:
  std::vector<int> slots_;
};

// A buffer in its own mapping, [guard page][data pages][guard page], the data at the start of its
// pages or flush against their end; the bytes of its pages around the data hold kGuardByte.
class PageGuarded {
 public:
  PageGuarded(std::size_t bytes, bool flush_end)
      : page_(static_cast<std::size_t>(sysconf(_SC_PAGESIZE))), bytes_(bytes) {
    span_ = (bytes + page_ - 1) / page_ * page_;
    total_ = span_ + 2 * page_;
    void* m = mmap(nullptr, total_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return;
    base_ = static_cast<unsigned char*>(m);
    if (mprotect(base_, page_, PROT_NONE) || mprotect(base_ + page_ + span_, page_, PROT_NONE)) {
      munmap(base_, total_);
      base_ = nullptr;
      return;
    }
    data_ = base_ + page_ + (flush_end ? span_ - bytes_ : 0);
    std::memset(base_ + page_, kGuardByte, span_);
  }
  ~PageGuarded() {
    if (base_) munmap(base_, total_);
  }
  PageGuarded(const PageGuarded&) = delete;
  PageGuarded& operator=(const PageGuarded&) = delete;

  bool ok() const { return base_ != nullptr; }
  unsigned char* data() { return data_; }
  uintptr_t start() const { return reinterpret_cast<uintptr_t>(data_); }
  uintptr_t end() const { return start() + bytes_; }
  uintptr_t guard_before() const { return reinterpret_cast<uintptr_t>(base_); }
  uintptr_t guard_after() const { return reinterpret_cast<uintptr_t>(base_ + page_ + span_); }
  // The first changed byte of its pages outside the data, as Guarded::damage() gives it.
  long damage() const {
    for (const unsigned char* q = base_ + page_; q < data_; ++q)
      if (*q != kGuardByte) return -static_cast<long>(data_ - q);
    const unsigned char* tail = data_ + bytes_;
    for (const unsigned char* q = tail; q < base_ + page_ + span_; ++q)
      if (*q != kGuardByte) return static_cast<long>(q - data_) + 1;
    return 0;
  }

 private:
  std::size_t page_, bytes_, span_ = 0, total_ = 0;
  unsigned char* base_ = nullptr;
  unsigned char* data_ = nullptr;
};

std::string byte_count(uint64_t n) {
  return std::to_string(n) + (n == 1 ? " byte" : " bytes");
}

// One page-guarded pass over the two operands and a poisoned result, every buffer's end (or
// start) against a guard page. Sets run.check and run.error when the backend touched a guard page,
// wrote around its data or threw; run.note when the pass could not be set up.
void page_pass(Backend& b, const CheckedProblem& checked, const Tensor& a, Role ra, const Tensor& c,
               Role rc, bool flush_end, Run& run) {
  const Problem& p = checked.problem();
  const char* pass = flush_end ? "with every buffer's end against a guard page"
                               : "with every buffer's start right after a guard page";
  PageGuarded ga(a.bytes(), flush_end), gc(c.bytes(), flush_end), gr(run.result.bytes(), flush_end);
  if (!ga.ok() || !gc.ok() || !gr.ok()) {
    run.note = "the page-guarded pass " + std::string(pass) + " was skipped: mmap failed";
    return;
  }
  if (a.bytes()) std::memcpy(ga.data(), a.data(), a.bytes());
  if (c.bytes()) std::memcpy(gc.data(), c.data(), c.bytes());
  poison(gr.data(), p.dtype, run.result.size());
  const ConstTensorView va{ga.data(), a.dtype(), a.shape(), a.layout()};
  const ConstTensorView vc{gc.data(), c.dtype(), c.shape(), c.layout()};
  Operands ops;
  ops.set(ra, &va);
  ops.set(rc, &vc);
  const TensorView vr{gr.data(), p.dtype, run.result.shape(), run.result.layout()};
  struct Buffer {
    PageGuarded* mem;
    std::string name;
  } buffers[] = {{&ga, role_name(ra)}, {&gc, role_name(rc)}, {&gr, result_name(p.op)}};
  Watching watching;
  int slot[3][2];
  for (int i = 0; i < 3; ++i)
    if (!watching.arm(buffers[i].mem->guard_before(), slot[i][0]) ||
        !watching.arm(buffers[i].mem->guard_after(), slot[i][1])) {
      run.note = "the page-guarded pass " + std::string(pass) +
                 " was skipped: too many passes in progress at once";
      return;
    }
  Run r;
  const bool returned = call_backend(b, checked, ops, vr, r);
  // A guard page first: what the backend did after reading one may be a consequence.
  for (int i = 0; i < 3; ++i)
    for (int side = 0; side < 2; ++side) {
      const Watch& w = g_watch[slot[i][side]];
      const uintptr_t at = w.hit.load();
      if (!at) continue;
      const int write = w.write.load();
      const PageGuarded& m = *buffers[i].mem;
      const std::string verb = write == 1 ? "wrote" : write == 0 ? "read" : "accessed";
      run.check = "out_of_bounds";
      run.error = side == 1 ? verb + " " + byte_count(at - m.end() + 1) + " past the end of " +
                                  buffers[i].name + " (a guard page, in a pass " + pass + ")"
                            : verb + " " + byte_count(m.start() - at) + " before the start of " +
                                  buffers[i].name + " (a guard page, in a pass " + pass + ")";
      return;
    }
  if (!returned) {
    run.check = r.check;
    run.error = r.error + " (in a pass " + std::string(pass) + ")";
    return;
  }
  for (const Buffer& buf : buffers)
    if (long d = buf.mem->damage()) {
      run.check = "out_of_bounds";
      run.error = "wrote outside " + buf.name + " (byte at offset " + std::to_string(d) +
                  " from its data changed, in a pass " + pass + ")";
      return;
    }
}

}  // namespace

Run run_guarded(Backend& b, const CheckedProblem& checked, const Roles& operands,
                const Tensor* reference, bool page_guards) {
  const Problem& p = checked.problem();
  const Geometry& g = checked.geometry();
  const OpIO io = op_io(p.op);
  Run run;
  run.result =
      Tensor(p.dtype, storage_shape(p, g, io.result_like), storage_layout(p, io.result_like));
  const Tensor& a = operands.get(io.a);
  const Tensor& c = operands.get(io.b);
  Guarded ga(a.bytes()), gc(c.bytes()), gr(run.result.bytes());
  if (a.bytes()) std::memcpy(ga.data(), a.data(), a.bytes());
  if (c.bytes()) std::memcpy(gc.data(), c.data(), c.bytes());
  poison(gr.data(), p.dtype, run.result.size());
  const ConstTensorView va{ga.data(), a.dtype(), a.shape(), a.layout(), kGuard};
  const ConstTensorView vc{gc.data(), c.dtype(), c.shape(), c.layout(), kGuard};
  Operands ops;
  ops.set(io.a, &va);
  ops.set(io.b, &vc);
  const TensorView vr{gr.data(), p.dtype, run.result.shape(), run.result.layout(), kGuard};
  const auto t0 = std::chrono::steady_clock::now();
  if (!call_backend(b, checked, ops, vr, run)) return run;
  run.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  run.ran = true;
  run.said = b.last_note();  // before the page-guarded passes run it again
  if (run.result.bytes()) std::memcpy(run.result.data(), gr.data(), run.result.bytes());
  if (long d = gr.damage()) {
    run.check = "out_of_bounds";
    run.error = "wrote outside the " + std::string(result_name(p.op)) +
                " buffer (guard byte at offset " + std::to_string(d) + " from its data changed)";
  } else if (long e = ga.damage() ? ga.damage() : gc.damage()) {
    run.check = "out_of_bounds";
    run.error = "wrote outside an operand buffer (guard byte at offset " + std::to_string(e) + ")";
  } else if (!same_bits(ga.data(), a.data(), a.bytes()) ||
             !same_bits(gc.data(), c.data(), c.bytes())) {
    run.check = "operand_modified";
    run.error = "modified an operand it only reads";
  } else {
    Tensor poisoned(p.dtype, run.result.shape());
    poison(poisoned.data(), p.dtype, poisoned.size());
    const std::size_t w = dtype_size(p.dtype);
    for (int64_t i = 0; i < run.result.size(); ++i) {
      const auto* got = static_cast<const unsigned char*>(run.result.data()) + i * w;
      const auto* bad = static_cast<const unsigned char*>(poisoned.data()) + i * w;
      const bool truly =
          reference &&
          same_bits(static_cast<const unsigned char*>(reference->data()) + i * w, bad, w);
      if (same_bits(got, bad, w) && !truly) {
        run.check = "unwritten";
        run.error = "left " + std::string(result_name(p.op)) + " element " + std::to_string(i) +
                    " unwritten (it still holds the poison)";
        break;
      }
    }
  }
  if (!page_guards || !run.check.empty()) return run;
  if (const char* e = std::getenv("CONVCHECK_PAGE_GUARDS"); e && std::string(e) == "off") {
    run.note = "the page-guarded passes were skipped: CONVCHECK_PAGE_GUARDS=off";
    return run;
  }
  const uint64_t copies = uint64_t{a.bytes()} + c.bytes() + run.result.bytes();
  if (copies > kPageGuardedBytes) {
    run.note =
        "the page-guarded passes (reads past a buffer's ends) were skipped: the case's "
        "buffers take " +
        format_bytes(copies) + ", more than the " + format_bytes(kPageGuardedBytes) +
        " they may copy (kPageGuardedBytes, core/limits.h)";
    return run;
  }
  for (bool flush_end : {false, true}) {
    page_pass(b, checked, a, io.a, c, io.b, flush_end, run);
    if (!run.check.empty()) break;
  }
  return run;
}

}  // namespace convcheck::oracle_detail
