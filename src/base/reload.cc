#include "base/reload.h"

#include <atomic>

namespace ferry {
namespace {
std::atomic<bool> g_reload_on_hangup{false};
std::atomic<uint64_t> g_reloads{0};
}  // namespace

void SetReloadOnHangup(bool on) { g_reload_on_hangup.store(on); }
bool ReloadOnHangup() { return g_reload_on_hangup.load(); }
void RequestReload() { g_reloads.fetch_add(1); }
uint64_t ReloadRequests() { return g_reloads.load(); }

}  // namespace ferry
