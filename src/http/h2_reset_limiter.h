#pragma once
// How many stream resets an HTTP/2 client may send (CVE-2023-44487, "rapid
// reset": HEADERS then RST_STREAM, over and over, so that a server starts
// work the client never waits for). A token bucket per connection: `burst`
// at once, refilled at `per_second`; once it is empty the connection is
// told to calm down (GOAWAY ENHANCE_YOUR_CALM) and closed. A browser
// cancels a few streams when a page is left; a flood cancels thousands.
// Pure: time is passed in.

#include <chrono>
#include <cstdint>

namespace ferry::http {

struct ResetLimit {
  uint32_t burst = 200;       // resets at once
  uint32_t per_second = 100;  // resets per second after that
};

class ResetLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  ResetLimiter(ResetLimit limit, Clock::time_point now);
  // Counts one reset at `now`: false when it is over the limit, and for
  // every reset after that (a connection does not earn its way back).
  bool Allow(Clock::time_point now);

 private:
  ResetLimit limit_;
  double tokens_;
  Clock::time_point last_;
  bool tripped_ = false;
};

}  // namespace ferry::http
