import Testing
import FarmCore
import TestSupport
import Foundation
@testable import FarmWeb

/// The dashboard and viewer's files as the repository holds them, and their linter (Scripts/lint-web: Debian's
/// eslint and tidy, which Scripts/test installs). Under OCRFARM_REQUIRE_ALL_TESTS=1 the lint tests always run, so a
/// missing linter fails them.
enum WebFiles {
    static var folder: String { Fixtures.packageRoot + "/Sources/FarmWeb/Web" }
    static var lint: String { Fixtures.packageRoot + "/Scripts/lint-web" }
    static var lintersInstalled: Bool { Capabilities.allRequired || (Run.which("eslint") != nil && Run.which("tidy") != nil) }

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
    }
}

@Suite("the web UI's files: kept in Sources/FarmWeb/Web, compiled in byte for byte, linted", .serialized)
struct AssetsTests {
    @Test("every file in Sources/FarmWeb/Web is compiled in as it is, and nothing else is served under /ui/")
    func compiledIn() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: WebFiles.folder).sorted()
        #expect(names == ["app.css", "app.js", "favicon.svg", "index.html"], "a new file needs its route and type in Assets")
        for name in names {
            let file = try #require(Assets.file(name), "\(name) is in Web/ but not served")
            let bytes = try WebFiles.bytes(name)
            #expect(file.body == bytes, "\(name): the compiled-in bytes differ from the file")
        }
        #expect(Assets.file("Assets.swift") == nil && Assets.file("") == nil && Assets.file("APP.JS") == nil)
    }

    @Test("the served /ui/ files are the files' bytes, with their types and the same headers as every answer")
    func served() throws {
        let folder = TemporaryDirectory("web-files")
        let store = folder.file("farm.db")
        let submit = try Run.ocrfarm(["submit", "--store", store, folder.write("broken.png", Array("no image".utf8))])
        #expect(submit.status == 0 || submit.status == 65, "\(submit.stderr)")
        let served = try Served(store: store, log: folder.file("serve.log"))
        let files = [("/", "index.html", "text/html; charset=utf-8"), ("/ui/app.js", "app.js", "text/javascript; charset=utf-8"),
                     ("/ui/app.css", "app.css", "text/css; charset=utf-8"), ("/ui/favicon.svg", "favicon.svg", "image/svg+xml"),
                     ("/favicon.ico", "favicon.svg", "image/svg+xml")]
        for (path, name, type) in files {
            let answer = try served.call(path)
            let bytes = try WebFiles.bytes(name)
            #expect(answer.status == 200 && answer.header("Content-Type") == type, "\(path): \(answer.head)")
            #expect(answer.data == bytes, "\(path): not the bytes of Web/\(name)")
            #expect(answer.header("Content-Length") == String(answer.data.count), "\(path): \(answer.head)")
            #expect(answer.header("Cache-Control") == "no-store" && answer.header("ETag") == nil, "\(path): \(answer.head)")
            #expect(answer.header("Content-Security-Policy")?.hasPrefix("default-src 'self'") == true, "\(path)")
        }
        let head = try served.call("/ui/app.js", method: "HEAD")
        let length = try WebFiles.bytes("app.js").count
        #expect(head.status == 200 && head.data.isEmpty && head.header("Content-Length") == String(length), "\(head.head)")
    }

    @Test("Scripts/lint-web finds nothing in the files as they are", .enabled(if: WebFiles.lintersInstalled))
    func lintClean() throws {
        let lint = try Run.process(WebFiles.lint, [])
        #expect(lint.status == 0, "\(lint.text)\(lint.stderr)")
    }

    @Test("a seeded error in the script or the page fails Scripts/lint-web, naming the file, line and reason",
          .enabled(if: WebFiles.lintersInstalled))
    func lintSeeded() throws {
        let folder = TemporaryDirectory("web-lint")
        let script = String(decoding: try WebFiles.bytes("app.js"), as: UTF8.self)
        let lines = script.split(separator: "\n", omittingEmptySubsequences: false).count
        let undefined = folder.write("undefined.js", text: script + "\nfunction seeded() { return undefinedName; }\nseeded();\n")
        var lint = try Run.process(WebFiles.lint, [undefined])
        #expect(lint.status == 1 && lint.text.contains("undefined.js:\(lines + 1):28: 'undefinedName' is not defined. [Error/no-undef]"),
                "\(lint.text)\(lint.stderr)")
        // Text from the store put in as HTML: the XSS the viewer must never allow.
        let html = folder.write("html.js", text: script + "\n$(\"view\").innerHTML = location.hash;\n")
        lint = try Run.process(WebFiles.lint, [html])
        #expect(lint.status == 1 && lint.text.contains("html.js:\(lines + 1):") && lint.text.contains("no-restricted-properties"),
                "\(lint.text)\(lint.stderr)")

        let page = String(decoding: try WebFiles.bytes("index.html"), as: UTF8.self)
        let unclosed = folder.write("unclosed.html", text: page.replacingOccurrences(of: "<main id=\"view\"></main>",
                                                                                     with: "<main id=\"view\"><p><b>open</p></main>"))
        lint = try Run.process(WebFiles.lint, [unclosed])
        #expect(lint.status == 1 && lint.stderr.contains("unclosed.html:") && lint.stderr.contains("missing </b>"), "\(lint.stderr)")

        let css = try Run.process(WebFiles.lint, [folder.write("app.css", text: "body {")])
        #expect(css.status == 64 && css.stderr.contains("app.css: no linter for this kind of file"), "\(css.stderr)")
    }
}
