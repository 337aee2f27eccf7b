import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What some tests need from the machine (root, iproute2, a language), as conditions for Swift Testing's
/// `.enabled(if:)`, so that a test that cannot run here is reported as skipped, not as passed.
///
/// CI has all of it, and sets `OCRFARM_REQUIRE_ALL_TESTS=1` (Scripts/test does when CI is set): there no test may be
/// skipped, so every condition holds and a missing capability fails the test that needs it.
public enum Capabilities {
    /// True when every test must run (CI).
    public static let allRequired = ProcessInfo.processInfo.environment["OCRFARM_REQUIRE_ALL_TESTS"] == "1"

    /// Root: a test may run commands as other users (setpriv).
    public static var isRoot: Bool { allRequired || (getuid() == 0 && Run.which("setpriv") != nil) }

    /// Root, with mount(8): a test may mount a tmpfs.
    public static var canMount: Bool { allRequired || (getuid() == 0 && Run.which("mount") != nil) }

    /// The formats' validators (Scripts/validators, which Scripts/test runs): `python` runs Scripts/validate-formats.
    public static var hasFormatValidators: Bool {
        allRequired || FileManager.default.isExecutableFile(atPath: FormatValidators.python)
    }

    /// Root, with ip(8): a test may make network namespaces.
    public static var canMakeNetworkNamespaces: Bool { allRequired || (getuid() == 0 && Run.which("ip") != nil) }
}

/// The readers' own validators of hOCR, ALTO and PAGE, installed by Scripts/validators into a venv.
public enum FormatValidators {
    public static var python: String { Fixtures.packageRoot + "/.build/validators/bin/python" }
    public static var script: String { Fixtures.packageRoot + "/Scripts/validate-formats" }

    /// Runs one check (`Scripts/validate-formats CHECK ARGUMENTS…`).
    public static func run(_ arguments: [String]) throws -> ProcessOutput { try Run.process(python, [script] + arguments) }
}
