#include "volume/qos.h"

namespace ferry::volume {

std::chrono::milliseconds HydrationPause(std::chrono::milliseconds since_client_io,
                                         std::chrono::milliseconds since_last_fetch, bool prefetch,
                                         const QosSettings& s) {
  if (prefetch) return std::chrono::milliseconds(0);
  if (since_client_io >= s.busy_window) return std::chrono::milliseconds(0);
  if (since_last_fetch >= s.trickle) return std::chrono::milliseconds(0);
  return s.trickle - since_last_fetch;
}

}  // namespace ferry::volume
