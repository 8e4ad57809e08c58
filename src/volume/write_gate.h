#pragma once
// Lets a volume's content be frozen at one instant while clients write:
// every write (WRITE, TRIM, WRITE_ZEROES) changes the volume inside an
// Enter/Leave pair, and Freeze runs a function while no write is inside.
// Once a freeze is waiting, new writes wait behind it, so a steady stream
// of writes cannot starve it (a reader-preferring rwlock could); the
// freeze itself waits only for the writes already inside. Reads never
// pass the gate. Thread-safe.

#include <condition_variable>
#include <functional>
#include <mutex>

namespace ferry::volume {

class WriteGate {
 public:
  void Enter();
  void Leave();
  // Waits until no write is inside, runs `frozen` with new writes held
  // off, then lets them in. Freezes run one at a time.
  void Freeze(const std::function<void()>& frozen);

  // Enter in the constructor, Leave in the destructor.
  class Writer {
   public:
    explicit Writer(WriteGate& gate) : gate_(gate) { gate_.Enter(); }
    ~Writer() { gate_.Leave(); }
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;

   private:
    WriteGate& gate_;
  };

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int inside_ = 0;         // guarded by mu_: writes between Enter and Leave
  bool freezing_ = false;  // guarded by mu_: a freeze waits or runs
};

}  // namespace ferry::volume
