// Errors and statuses shared by every layer.
//
// Bad user input (descriptor, .npy file, operand shape, CLI flag) throws InvalidArgument; the CLI
// maps it to exit code 2. A Status is the non-throwing answer of availability and capability
// queries
// ("unsupported is a reason, never a silent pass").
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace convcheck {

/// Bad input from the user: the message names what was wrong, with every number.
class InvalidArgument : public std::runtime_error {
 public:
  explicit InvalidArgument(const std::string& what) : std::runtime_error(what) {}
};

/// A problem or file too large for the memory limit (core/limits.h): bad input like any other
/// (exit code 2), told apart so that callers can report it as a resource refusal.
class ResourceLimit : public InvalidArgument {
 public:
  explicit ResourceLimit(const std::string& what) : InvalidArgument(what) {}
};

/// A backend found that its kernel wrote where it must not (a device copy of an operand or of a
/// guard band changed). The oracle turns it into the verdict check named by `check()`:
/// "out_of_bounds" (a guard byte changed) or "operand_modified" (an operand's data changed).
class GuardViolation : public std::runtime_error {
 public:
  GuardViolation(std::string check, const std::string& what)
      : std::runtime_error(what), check_(std::move(check)) {}
  const std::string& check() const { return check_; }

 private:
  std::string check_;
};

/// A backend whose code runs out of process (the plugin runner, plugins/) died: killed by a signal
/// or exited. The oracle's verdict is `crashed`, with this text (naming the signal) as the reason.
class Crash : public std::runtime_error {
 public:
  explicit Crash(const std::string& what) : std::runtime_error(what) {}
};

/// A backend call that did not finish within its time limit (--plugin-timeout) and was killed.
/// The oracle's verdict is `timeout`.
class Timeout : public std::runtime_error {
 public:
  explicit Timeout(const std::string& what) : std::runtime_error(what) {}
};

/// The outcome of a query that may decline: ok, or a one-line reason with a code saying what kind
/// of "no" it is. The code, never the wording of the reason, decides a verdict (a backend's reason
/// may say anything, "crashed" included).
class Status {
 public:
  enum class Code {
    ok,
    unsupported,  // declined: unavailable here, or cannot implement the problem (a reason, no
                  // fault)
    crashed,      // the backend failed while answering (threw, or its process died)
    timeout,      // the backend did not answer within its time limit
  };
  static Status Ok() { return Status(Code::ok, ""); }
  /// Declined with a reason: unavailable, or unsupported (Code::unsupported).
  static Status Error(std::string reason) { return Status(Code::unsupported, std::move(reason)); }
  static Status Crashed(std::string reason) { return Status(Code::crashed, std::move(reason)); }
  static Status TimedOut(std::string reason) { return Status(Code::timeout, std::move(reason)); }
  bool ok() const { return code_ == Code::ok; }
  Code code() const { return code_; }
  const std::string& reason() const { return reason_; }
  explicit operator bool() const { return ok(); }

 private:
  Status(Code code, std::string reason) : code_(code), reason_(std::move(reason)) {}
  Code code_;
  std::string reason_;
};

}  // namespace convcheck
