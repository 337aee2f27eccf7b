import FarmCore
#if canImport(Glibc)
import Glibc
#endif
import FarmRuntime

// Must come first: OpenMP reads its thread limit when libgomp loads, before main.
OpenMP.ensureSingleThreaded()
setlocale(LC_ALL, "C")
signal(SIGPIPE, SIG_IGN)
// C libraries (libpng, libjpeg) sometimes print to stderr themselves; keep that off the user's terminal. A worker's
// page process leaves it to the worker, which reads it from a pipe: a library's last words before it aborts tell an
// allocation failure (std::bad_alloc) from a crash.
if !(CommandLine.arguments.count > 1 && CommandLine.arguments[1] == "worker" && CommandLine.arguments.contains("--page-reader")) {
    Console.captureLibraryNoise()
}

exit(Commands.main(Array(CommandLine.arguments.dropFirst())).rawValue)
