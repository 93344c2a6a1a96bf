// The wire protocol between the harness (plugins/runner.cpp) and convcheck-plugin-host
// (plugins/host.cpp). Both are built from this tree together, so messages are plain structs sent
// whole over an AF_UNIX SOCK_SEQPACKET socket pair (one message per datagram, never split).
//
//   harness                                   host (child process; the plugin is loaded here)
//   posix_spawn(host, fd 3 = socket, fd 4 = memfd of the shared buffers)
//                                     <--     Hello (loaded? versions, name, memory kind, error)
//   Request{available | can_implement |
//           contract | run}           -->
//                                     <--     Reply{rc, text, contract, ms}
//                                     <--     Fault{signal, address} (from the fatal-signal
//                                             handler, just before the host dies)
//
// Run requests carry the layout of the shared memory: for each role and the result, the byte
// offset of its data (64-byte aligned, in pages of its own preceded and followed by PROT_NONE
// guard pages in the host) and its size. The host maps operands read-only and the result
// read-write.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plugins/convcheck_plugin.h"

namespace convcheck::plugin_protocol {

enum class Type : uint32_t { hello = 1, available, can_implement, contract, run, reply, fault };

constexpr std::size_t kText = 1024;        // every text field, NUL included
constexpr std::size_t kDescriptor = 1024;  // the problem's canonical descriptor
constexpr int kSocketFd = 3;               // the host's fds
constexpr int kShmFd = 4;

// Buffer slots in a run's shared memory: the three roles (design §3) and the result.
enum Slot { kInput = 0, kFilter = 1, kOutBackprop = 2, kResult = 3, kSlots = 4 };

struct Hello {
  Type type = Type::hello;
  int32_t loaded = 0;         // 1: the plugin is loaded and speaks our ABI version
  uint32_t plugin_abi = 0;    // the table's abi_version (0: no table)
  uint32_t memory = 0;        // CONVCHECK_MEMORY_*
  int32_t has_available = 0;  // the table has an available() function
  uint32_t sandbox_mode = 0;  // plugin_sandbox::Mode the host confined itself in
  uint32_t protections = 0;   // plugin_sandbox::Protection bits it applied
  char name[128] = {};
  char description[256] = {};
  char error[kText] = {};  // why it did not load (or its sandbox could not be set up)
};

struct Request {
  Type type = Type::run;
  int32_t threads = 0;          // OpenMP threads to set before the call (0: leave as is)
  convcheck_problem problem{};  // `descriptor` is set by the host to point at `descriptor` below
  char descriptor[kDescriptor] = {};
  // run only: the shared memory's size and each slot's data offset (-1: not passed) and size.
  uint64_t shm_bytes = 0;
  int64_t offset[kSlots] = {-1, -1, -1, -1};
  uint64_t bytes[kSlots] = {};
};

struct Reply {
  Type type = Type::reply;
  int32_t rc = 0;          // the plugin's return value
  int32_t host_error = 0;  // 1: the host itself failed (text says why); the plugin was not called
  int32_t reserved = 0;
  double ms = 0;  // the plugin call's wall time, measured in the host
  convcheck_contract contract{};
  char text[kText] = {};
};

struct Fault {
  Type type = Type::fault;
  int32_t signo = 0;
  int32_t code = 0;     // si_code
  int32_t in_shm = 0;   // 1: the address lies in the shared mapping (offset valid)
  int32_t access = -1;  // 1 write, 0 read, -1 unknown
  int32_t reserved = 0;
  uint64_t address = 0;
  uint64_t offset = 0;  // from the shared mapping's start
};

}  // namespace convcheck::plugin_protocol
