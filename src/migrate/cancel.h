#pragma once
// Cancelling a job (`ferry migrate cancel`). A job a live runner holds is
// marked cancelling: that runner sees it within a moment, stops, aborts its
// multipart uploads and records it cancelled. A job nobody runs is
// cancelled here: its open uploads at the destination are aborted, then
// it is recorded cancelled and archived.

#include <functional>
#include <string>

#include "base/status.h"
#include "state/state_store.h"
#include "store/open/open.h"

namespace ferry::migrate {

enum class CancelOutcome {
  kAsked,      // a live runner holds it and stops shortly
  kCancelled,  // cancelled and archived here
};

// `open_options(profile)`: how to open the destination under the job's
// profile (credentials and endpoints come from the caller's flags). A job
// already completed, failed or cancelled is kInvalidArgument ("is already
// completed"). An upload that cannot be aborted does not stop the cancel
// (the store's lifecycle rules or `ferry migrate` reruns reclaim it).
Result<CancelOutcome> CancelJob(state::StateStore& store, const std::string& id,
                                const std::function<OpenOptions(const std::string& profile)>& open_options);

}  // namespace ferry::migrate
