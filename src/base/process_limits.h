#pragma once
// Process-wide limits a server or a highly concurrent client needs.

namespace ferry {

// Raises the soft limit on open descriptors to the hard limit: hundreds of
// transfers in flight hold two connections each, more than the usual soft
// limit of 1024 allows. Best effort; errors are ignored.
void RaiseOpenFileLimit();

}  // namespace ferry
