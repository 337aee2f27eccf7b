import Testing
import FarmCore
import FarmRuntime
import TestSupport
import Foundation

/// The command line as a newcomer meets it: every help lists its exit codes, a variable means one thing, a
/// mistyped command gets a suggestion, one spelling per format.
@Suite("The command line (end to end)")
struct CommandLineTests {
    static let commands = ["run", "submit", "coordinator", "worker", "status", "requeue", "delete", "search", "keywords", "review",
                           "export", "ocr", "inspect", "health", "backup", "serve", "token", "keygen", "version", "help"]

    /// Every option of every command with the variable its help names: (command, option, variable, help text).
    static func variables() throws -> [(command: String, option: String, variable: String, help: String)] {
        var rows: [(String, String, String, String)] = []
        for command in commands {
            let help = try Run.ocrfarm(["help", command]).text
            for match in help.matches(of: /\n  (--[a-z-]+)[^\n]*?  (\S[^\n]*?)  \[env (OCRFARM_[A-Z_]+)\]/) {
                rows.append((command, String(match.1), String(match.3), String(match.2)))
            }
        }
        return rows
    }

    @Test("every command's help lists its exit codes")
    func exitCodes() throws {
        for command in Self.commands {
            let help = try Run.ocrfarm(["help", command])
            #expect(help.status == 0 && help.text.contains("Exit status:"), "ocrfarm help \(command): \(help.text)")
        }
    }

    @Test("a variable means one thing: options whose meaning differs by command get a variable per command")
    func oneMeaningPerVariable() throws {
        let rows = try Self.variables()
        #expect(rows.count > 50, "the help lines were found: \(rows.count)")
        func variable(_ command: String, _ option: String) -> String? {
            rows.first { $0.command == command && $0.option == option }?.variable
        }
        // The clashes the archivist met: a page timeout and an answer timeout, two format lists, three --out, two --force.
        #expect(variable("health", "--timeout") == "OCRFARM_HEALTH_TIMEOUT")
        #expect(variable("run", "--timeout") == "OCRFARM_RUN_TIMEOUT")
        #expect(variable("ocr", "--format") == "OCRFARM_OCR_FORMAT")
        #expect(variable("export", "--format") == "OCRFARM_EXPORT_FORMAT")
        #expect(Set(["ocr", "export", "keygen"].compactMap { variable($0, "--out") }).count == 3)
        #expect(variable("backup", "--force") != variable("submit", "--force"))
        // The deployment settings the unit files set stay shared.
        for (command, option, name) in [("worker", "--connect", "OCRFARM_CONNECT"), ("worker", "--slots", "OCRFARM_SLOTS"),
                                        ("coordinator", "--bind", "OCRFARM_BIND"), ("status", "--store", "OCRFARM_STORE"),
                                        ("worker", "--lang", "OCRFARM_LANG")] {
            #expect(variable(command, option) == name, "\(command) \(option)")
        }
        // A variable that two commands share is one option of one meaning there (the same option name).
        for (name, uses) in Dictionary(grouping: rows, by: \.variable) where Set(uses.map(\.option)).count > 1 {
            Issue.record("\(name) is read by different options: \(uses.map { "\($0.command) \($0.option)" })")
        }

        // OCRFARM_FORMAT=txt (export's spelling) once broke ocr: now nothing reads it, and txt is accepted anyway.
        let page = Fixtures.packageRoot + "/Samples/pages/clean-000.png"
        let plain = try Run.ocrfarm(["ocr", page], environment: ["OCRFARM_FORMAT": "pdf", "OCRFARM_TIMEOUT": "0.001",
                                                                "OMP_THREAD_LIMIT": "1"])
        #expect(plain.status == 0 && plain.text.contains("Permission"), "\(plain.stderr)")
        let txt = try Run.ocrfarm(["ocr", "--format", "txt", page], environment: ["OMP_THREAD_LIMIT": "1"])
        #expect(txt.status == 0 && txt.text == plain.text, "\(txt.stderr)")
    }

    @Test("a mistyped command gets a suggestion")
    func suggestion() throws {
        let output = try Run.ocrfarm(["sbumit", "x.png"])
        #expect(output.status == 64)
        #expect(output.stderr.hasPrefix("ocrfarm: unknown command 'sbumit' (did you mean 'submit'?)"), "\(output.stderr)")
        let far = try Run.ocrfarm(["photograph"])
        #expect(far.status == 64 && !far.stderr.contains("did you mean"), "\(far.stderr)")
    }

    @Test("store problems say the path and why, with their exit code; a mistyped language gets the nearest one")
    func plainWords() throws {
        let page = Fixtures.packageRoot + "/Samples/pages/clean-000.png"
        let missing = try Run.ocrfarm(["submit", "--store", "/nonexistent-folder-ocrfarm/x.db", page])
        #expect(missing.status == 73, "\(missing.stderr)")
        #expect(missing.stderr.contains("cannot make the store /nonexistent-folder-ocrfarm/x.db: the folder /nonexistent-folder-ocrfarm does not exist"),
                "\(missing.stderr)")
        #expect(!missing.stderr.contains("unable to open database file"), "no raw SQLite text")
        let typo = try Run.ocrfarm(["ocr", "--lang", "chi_simp", page])
        #expect(typo.status == 69 && typo.stderr.contains("not a Tesseract language: chi_simp (did you mean chi_sim?)"), "\(typo.stderr)")
        #expect(!typo.stderr.contains("tesseract-ocr-chi-simp"), "no package that does not exist")
    }

    @Test("run passes --page-memory on to its workers")
    func runPassesLimits() throws {
        let folder = TemporaryDirectory("run-limits")
        let page = folder.file("clean-000.png")
        try FileSystem.write(try FileSystem.read(Fixtures.packageRoot + "/Samples/pages/clean-000.png"), to: page)
        let run = try Run.ocrfarm(["run", "--store", folder.file("s.db"), "--workers", "1", "--page-memory", "16", page],
                                  environment: ["OMP_THREAD_LIMIT": "1"])
        #expect(run.status == 65, "\(run.stderr)")
        #expect(run.stderr.contains("image-too-large") && run.stderr.contains("over the budget of 17 MB"), "\(run.stderr)")
    }
}
