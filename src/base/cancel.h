#pragma once
// Process-wide cancellation (Ctrl-C, SIGTERM). Long operations poll it at
// their natural steps — each body chunk read or written, each task started,
// each retry wait — and unwind with kCancelled, so their ordinary cleanup
// runs: temp files are removed, multipart uploads aborted. A transfer blocked
// on a silent peer notices at its next socket deadline.

#include "base/status.h"

namespace ferry {

void RequestCancel();
bool CancelRequested();
// The Status a cancelled operation returns: kCancelled, not retryable.
Status CancelledStatus();

}  // namespace ferry
