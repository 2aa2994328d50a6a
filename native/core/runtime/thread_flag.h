// A flag of the calling thread, set while a Scope lives and put back as it was after: Tag names the flag.
#pragma once

namespace firebrand {

template <typename Tag>
class ThreadFlag {
 public:
  class Scope {
   public:
    explicit Scope(bool on = true) : previous_(value()) { value() = on; }
    ~Scope() { value() = previous_; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    bool previous_;
  };

  static bool isSet() { return value(); }

 private:
  static bool& value() {
    thread_local bool flag = false;
    return flag;
  }
};

}  // namespace firebrand
