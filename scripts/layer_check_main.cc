// The program each layer is linked into, whole, with only the layers it
// declares (src/CMakeLists.txt): if it links, the layer calls nothing
// above it. It is never run.
int main() { return 0; }
