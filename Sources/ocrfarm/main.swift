import FarmCore
#if canImport(Glibc)
import Glibc
#endif

// Must come first: OpenMP reads its thread limit when libgomp loads, before main.
OpenMP.ensureSingleThreaded()
setlocale(LC_ALL, "C")
signal(SIGPIPE, SIG_IGN)
// C libraries (libpng, libjpeg) sometimes print to stderr themselves; keep that off the user's terminal.
Console.captureLibraryNoise()

exit(Commands.main(Array(CommandLine.arguments.dropFirst())).rawValue)
