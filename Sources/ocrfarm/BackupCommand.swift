import FarmCore
import FarmRuntime
import FarmStore

/// `ocrfarm backup`: an online copy of the store.
struct BackupCommand: Command {
    static let name = "backup"
    static let abstract = "Copy the store to a file while the coordinator keeps running (SQLite's backup API)."
    static let arguments = ""
    static let options: [OptionSpec] = [
        StoreOption.spec,
        OptionSpec("--to", value: "FILE", "Where the copy goes (required)."),
        OptionSpec("--force", "Replace FILE if it exists."),
    ]
    static let discussion = """
    The copy is one consistent snapshot: it holds a read transaction for its whole length, which in WAL mode
    blocks no writer, and copies the database 1024 pages (4 MB) per step. It is written beside FILE under a
    temporary name, switched to a single file (no -wal beside it), checked with PRAGMA integrity_check, and only
    then renamed to FILE. To restore, stop the coordinator and copy FILE over the store (removing its -wal and
    -shm).

    Prints the copy's size, integrity, documents and pages by state.

    Exit status: 0 copied; 64 bad options; 66 no store; 73 FILE exists (without --force) or is the store;
    74 the copy failed (disk full, I/O, integrity).
    """

    let storePath: String
    let destination: String
    let force: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard arguments.positionals.isEmpty else { throw UsageError(message: "backup takes no arguments; give --to FILE") }
        storePath = StoreOption.path(arguments)
        guard let destination = arguments.string("--to"), !destination.isEmpty else {
            throw UsageError(message: "--to FILE is required: where the copy goes")
        }
        self.destination = destination
        force = arguments.flag("--force")
    }

    func run() throws -> ExitStatus {
        let store = try ReportDocuments.open(storePath)
        if let target = FileSystem.canonicalPath(destination) {
            if target == FileSystem.canonicalPath(storePath) {
                throw CommandFailure(.cannotCreate, "\(destination) is the store itself; back up to another file")
            }
            if FileSystem.isDirectory(destination) {
                throw CommandFailure(.cannotCreate, "\(destination) is a directory; give a file name")
            }
            if !force { throw CommandFailure(.cannotCreate, "\(destination) already exists; give --force to replace it") }
        }
        let folder = FileSystem.directoryName(destination)
        guard FileSystem.isDirectory(folder) else {
            throw CommandFailure(.cannotCreate, "\(destination): no folder \(folder)")
        }
        let summary: BackupSummary
        do {
            summary = try store.backup(to: destination)
        } catch let error as StoreError {
            throw CommandFailure(.ioError, error.message)
        }
        let status = summary.status
        let states = PageState.allCases.map { "\($0.rawValue) \(status.count($0))" }.joined(separator: ", ")
        Console.out("""
        backup \(summary.path): \(summary.databasePages) database pages in \(summary.steps) steps, integrity \(summary.integrity)
        documents \(status.documents), pages \(status.totalPages) (\(states))

        """)
        return .success
    }
}
