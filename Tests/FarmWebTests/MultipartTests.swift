import Testing
@testable import FarmWeb

@Suite("multipart/form-data: parsed within bounds, bad bodies are errors, names made safe")
struct MultipartTests {
    let boundary = "XyZ"

    func body(_ parts: [(String, String?, String)]) -> [UInt8] {
        var text = ""
        for (name, filename, content) in parts {
            text += "--XyZ\r\nContent-Disposition: form-data; name=\"\(name)\""
            if let filename { text += "; filename=\"\(filename)\"" }
            text += "\r\n\r\n\(content)\r\n"
        }
        return Array((text + "--XyZ--\r\n").utf8)
    }

    @Test("fields and files come out whole, a body containing dashes or CRLFs included")
    func parses() throws {
        let parts = try Multipart.parse(body([("document", nil, "a name"), ("file", "a.png", "--XY\r\nnot the end\r\n-")]),
                                        boundary: boundary, maxParts: 10)
        #expect(parts.count == 2)
        #expect(parts[0].name == "document" && parts[0].filename == nil && parts[0].body == Array("a name".utf8))
        #expect(parts[1].filename == "a.png" && parts[1].body == Array("--XY\r\nnot the end\r\n-".utf8))
        #expect(Multipart.boundary("multipart/form-data; boundary=\"XyZ\"") == "XyZ")
        #expect(Multipart.boundary("text/plain; boundary=XyZ") == nil)
    }

    @Test("truncated, unclosed, headless and random bodies are errors, never a crash; part count bounded")
    func badBodies() {
        let good = body([("file", "a.png", "content")])
        for cut in 0..<good.count {
            _ = try? Multipart.parse(Array(good[..<cut]), boundary: boundary, maxParts: 10)
        }
        #expect(throws: Multipart.Failure.self) { try Multipart.parse(Array("--XyZ\r\nno head".utf8), boundary: boundary, maxParts: 10) }
        #expect(throws: Multipart.Failure.self) { try Multipart.parse(Array("nothing here".utf8), boundary: boundary, maxParts: 10) }
        #expect(throws: Multipart.Failure.self) {
            try Multipart.parse(body((0..<5).map { ("f\($0)", "\($0).png", "x") }), boundary: boundary, maxParts: 3)
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let noise = (0..<Int.random(in: 0..<300, using: &generator)).map { _ in
                [UInt8(ascii: "-"), 13, 10, UInt8(ascii: "X"), UInt8(ascii: "y"), UInt8(ascii: "Z"), UInt8.random(in: 0...255)].randomElement()!
            }
            _ = try? Multipart.parse(noise, boundary: boundary, maxParts: 10)
        }
    }

    @Test("file names: the last component only, safe characters, no leading dot")
    func safeNames() {
        #expect(Multipart.safeName("../../etc/passwd") == "passwd")
        #expect(Multipart.safeName("..\\..\\boot.ini") == "boot.ini")
        #expect(Multipart.safeName("/abs/path/scan 1.png") == "scan_1.png")
        #expect(Multipart.safeName(".hidden") == "hidden")
        #expect(Multipart.safeName("..") == "upload")
        #expect(Multipart.safeName("") == "upload")
        #expect(Multipart.safeName("Brief an Müller.tif") == "Brief_an_M_ller.tif")
        #expect(Multipart.safeName(String(repeating: "a", count: 300) + ".png").count == 100)
    }
}
