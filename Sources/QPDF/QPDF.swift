import CQPDF

/// A failed qpdf operation, with what qpdf said (captured through its logger, never printed).
public struct QPDFError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What went wrong, from qpdf's error code, for callers that act on it without reading the message.
    public enum Kind: Sendable, Equatable {
        case failed
        /// The PDF is encrypted and the password (none, or the one given) does not open it.
        case password
    }

    public let operation: String
    public let message: String
    public var kind: Kind = .failed

    public var description: String { "\(operation): \(message)" }
}

/// A PDF/A output intent: the ICC profile of the colours the document means, and its names.
public struct OutputIntent: Sendable {
    public let profile: [UInt8]
    public let components: Int
    public let identifier: String
    public let info: String

    public init(profile: [UInt8], components: Int, identifier: String, info: String) {
        self.profile = profile
        self.components = components
        self.identifier = identifier
        self.info = info
    }
}

/// Facts about a PDF file.
public struct PDFInfo: Sendable, Equatable {
    public let pageCount: Int
    public let isEncrypted: Bool
}

/// PDF assembly with qpdf.
public enum QPDF {
    /// Merges whole PDFs into one document at `output`, pages in the order of `inputs`: its objects other than
    /// streams packed into object streams, found through a cross-reference stream (PDF 1.5; PDF/A-2 allows both),
    /// as the one-page files are written.
    public static func merge(_ inputs: [String], into output: String, linearize: Bool = false) throws(QPDFError) {
        guard !inputs.isEmpty else { throw QPDFError(operation: "merge", message: "no input files") }
        var job: [String: JSONText] = [
            "empty": .string(""),
            "objectStreams": .string("generate"),
            "outputFile": .string(output),
            "pages": .array(inputs.map { .object(["file": .string($0)]) }),
        ]
        if linearize { job["linearize"] = .string("") }
        try run(json: JSONText.object(job).rendered, operation: "merge into \(output)")
    }

    /// Writes the PDF at `path` to `output` with a new document `/Info` (`info`: keys without the slash, text values)
    /// and, when given, a new XMP metadata stream and output intent on the catalog (for PDF/A); any old ones are
    /// replaced, or removed when not given. qpdf writes a new trailer /ID, and here puts an end of line before every
    /// `endstream` (PDF/A wants one; qpdf's default leaves it out).
    public static func setMetadata(_ path: String, into output: String, info: [(key: String, value: String)], xmp: [UInt8]?,
                                   outputIntent: OutputIntent?) throws(QPDFError)
    {
        try withHandle { handle, log throws(QPDFError) in
            try setMetadata(handle, log: log, path, into: output, info: info, xmp: xmp, outputIntent: outputIntent)
        }
    }

    /// `beforeWriting` may change the document and the writer's settings after the metadata is set.
    static func setMetadata(_ handle: qpdf_data?, log: MessageLog, _ path: String, into output: String,
                            info: [(key: String, value: String)], xmp: [UInt8]?, outputIntent: OutputIntent?,
                            beforeWriting: (qpdf_data?) -> Void = { _ in }) throws(QPDFError)
    {
        func failure(_ what: String) -> QPDFError {
            let message = lastError(handle, log: log).message
            return QPDFError(operation: "\(what) \(path)", message: message.isEmpty ? "qpdf failed" : message)
        }
        // An empty password opens a PDF restricted by an owner password alone.
        guard qpdf_read(handle, path, "") & Int32(QPDF_ERRORS) == 0, qpdf_has_error(handle) == 0 else { throw failure("read") }
        let dictionary = qpdf_oh_new_dictionary(handle)
        for (key, value) in info { qpdf_oh_replace_key(handle, dictionary, "/" + key, qpdf_oh_new_unicode_string(handle, value)) }
        qpdf_oh_replace_key(handle, qpdf_get_trailer(handle), "/Info", qpdf_make_indirect_object(handle, dictionary))
        let root = qpdf_get_root(handle)
        qpdf_oh_remove_key(handle, root, "/Metadata")
        qpdf_oh_remove_key(handle, root, "/OutputIntents")
        func stream(_ bytes: [UInt8], _ entries: [(String, qpdf_oh)]) -> qpdf_oh {
            let stream = qpdf_oh_new_stream(handle)
            bytes.withUnsafeBufferPointer { buffer in
                qpdf_oh_replace_stream_data(handle, stream, buffer.baseAddress, buffer.count, qpdf_oh_new_null(handle), qpdf_oh_new_null(handle))
            }
            let dictionary = qpdf_oh_get_dict(handle, stream)
            for (key, value) in entries { qpdf_oh_replace_key(handle, dictionary, key, value) }
            return stream
        }
        if let xmp {
            qpdf_oh_replace_key(handle, root, "/Metadata", stream(xmp, [
                ("/Type", qpdf_oh_new_name(handle, "/Metadata")), ("/Subtype", qpdf_oh_new_name(handle, "/XML")),
            ]))
        }
        if let outputIntent {
            let intent = qpdf_oh_new_dictionary(handle)
            qpdf_oh_replace_key(handle, intent, "/Type", qpdf_oh_new_name(handle, "/OutputIntent"))
            qpdf_oh_replace_key(handle, intent, "/S", qpdf_oh_new_name(handle, "/GTS_PDFA1"))
            qpdf_oh_replace_key(handle, intent, "/OutputConditionIdentifier", qpdf_oh_new_string(handle, outputIntent.identifier))
            qpdf_oh_replace_key(handle, intent, "/Info", qpdf_oh_new_string(handle, outputIntent.info))
            qpdf_oh_replace_key(handle, intent, "/DestOutputProfile", stream(outputIntent.profile, [
                ("/N", qpdf_oh_new_integer(handle, Int64(outputIntent.components))),
            ]))
            let intents = qpdf_oh_new_array(handle)
            qpdf_oh_append_item(handle, intents, intent)
            qpdf_oh_replace_key(handle, root, "/OutputIntents", intents)
        }
        guard qpdf_has_error(handle) == 0 else { throw failure("update") }
        // QPDFWriter keeps the output name's pointer and reads it again while writing (its /ID seed), so the C
        // string lives until the write is done (a temporary bridged for `qpdf_init_write` alone was read after it
        // was freed: AddressSanitizer, heap-use-after-free in QPDFWriter::write).
        let failed: String? = output.withCString { name in
            guard qpdf_init_write(handle, name) & Int32(QPDF_ERRORS) == 0 else { return "update" }
            qpdf_set_newline_before_endstream(handle, 1)
            beforeWriting(handle)
            guard qpdf_write(handle) & Int32(QPDF_ERRORS) == 0, qpdf_has_error(handle) == 0 else { return "write" }
            return nil
        }
        if let failed { throw failure(failed) }
    }

    /// Splits the PDF at `path` into one file per page in `directory` (which must exist); returns their paths in
    /// page order.
    public static func splitPages(_ path: String, into directory: String) throws(QPDFError) -> [String] {
        let output = directory + "/page.pdf"
        let job: [String: JSONText] = [
            "inputFile": .string(path),
            "outputFile": .string(output),
            "splitPages": .string("1"),
        ]
        try run(json: JSONText.object(job).rendered, operation: "split \(path)")
        let count = try info(path).pageCount
        // qpdf numbers the parts with as many digits as the page count needs: page-01.pdf … page-12.pdf.
        let digits = String(count).count
        return (1...max(count, 1)).map { number in
            let text = String(number)
            return directory + "/page-" + String(repeating: "0", count: max(0, digits - text.count)) + text + ".pdf"
        }
    }

    /// Page count and encryption of the PDF at `path`.
    public static func info(_ path: String, password: String? = nil) throws(QPDFError) -> PDFInfo {
        try info(password: password, name: path) { handle in qpdf_read(handle, path, password) }
    }

    /// Page count and encryption of a PDF in memory; `name` appears in messages.
    public static func info(bytes: [UInt8], name: String = "PDF", password: String? = nil) throws(QPDFError) -> PDFInfo {
        try bytes.withUnsafeBufferPointer { buffer throws(QPDFError) in
            try info(password: password, name: name) { handle in
                buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { chars in
                    qpdf_read_memory(handle, name, chars, UInt64(buffer.count), password)
                }
            }
        }
    }

    private static func info(password: String?, name path: String, read: (qpdf_data?) -> Int32) throws(QPDFError) -> PDFInfo {
        try withHandle { handle, log throws(QPDFError) in
            let rc = read(handle)
            if (rc & Int32(QPDF_ERRORS)) != 0 || qpdf_has_error(handle) != 0 {
                let error = lastError(handle, log: log)
                throw QPDFError(operation: "read \(path)", message: error.message.isEmpty ? "cannot read the PDF" : error.message,
                                kind: error.needsPassword ? .password : .failed)
            }
            let pages = qpdf_get_num_pages(handle)
            guard pages >= 0 else { throw QPDFError(operation: "read \(path)", message: "cannot count the pages") }
            return PDFInfo(pageCount: Int(pages), isEncrypted: qpdf_is_encrypted(handle) != 0)
        }
    }

    /// Runs `body` with a qpdf handle of its own that logs into `log` (warnings suppressed, errors kept rather than
    /// printed); the handle and its logger are cleaned up after.
    static func withHandle<T>(_ body: (qpdf_data?, MessageLog) throws(QPDFError) -> T) throws(QPDFError) -> T {
        var handle: qpdf_data? = qpdf_init()
        defer { qpdf_cleanup(&handle) }
        let log = MessageLog()
        let logger = log.makeLogger()
        defer { var l: qpdflogger_handle? = logger; qpdflogger_cleanup(&l) }
        qpdf_set_logger(handle, logger)
        qpdf_set_suppress_warnings(handle, 1)
        qpdf_silence_errors(handle)
        return try body(handle, log)
    }

    /// Reads the PDF in `bytes` (`name` in messages) into `handle`, a handle of `withHandle`; throws qpdf's error
    /// when it cannot be read (a password it needs is `.password`).
    static func read(_ bytes: [UInt8], into handle: qpdf_data?, log: MessageLog, name: String,
                     password: String? = nil) throws(QPDFError) {
        guard !bytes.isEmpty else { throw QPDFError(operation: "read \(name)", message: "the file is empty") }
        let rc = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { chars in
                qpdf_read_memory(handle, name, chars, UInt64(buffer.count), password)
            }
        }
        guard rc & Int32(QPDF_ERRORS) == 0, qpdf_has_error(handle) == 0 else {
            throw failure("read", name, handle: handle, log: log)
        }
    }

    /// The error of `operation` on the PDF `name` that `handle` holds (qpdf's text, else "qpdf failed").
    static func failure(_ operation: String, _ name: String, handle: qpdf_data?, log: MessageLog) -> QPDFError {
        let error = lastError(handle, log: log)
        return QPDFError(operation: "\(operation) \(name)", message: error.message.isEmpty ? "qpdf failed" : error.message,
                         kind: error.needsPassword ? .password : .failed)
    }

    /// What went wrong on `handle`: qpdf's full error text (else what it logged), and whether it asked for a password.
    static func lastError(_ handle: qpdf_data?, log: MessageLog) -> (message: String, needsPassword: Bool) {
        guard let error = qpdf_get_error(handle) else { return (log.text, false) }
        let message = qpdf_get_error_full_text(handle, error).map { String(cString: $0) } ?? log.text
        return (message, qpdf_get_error_code(handle, error) == qpdf_e_password)
    }

    /// The qpdf library version.
    public static var version: String { String(cString: qpdf_get_qpdf_version()) }

    private static func run(json: String, operation: String) throws(QPDFError) {
        var job: qpdfjob_handle? = qpdfjob_init()
        defer { qpdfjob_cleanup(&job) }
        let log = MessageLog()
        let logger = log.makeLogger()
        defer { var l: qpdflogger_handle? = logger; qpdflogger_cleanup(&l) }
        qpdfjob_set_logger(job, logger)
        guard qpdfjob_initialize_from_json(job, json) == 0 else {
            throw QPDFError(operation: operation, message: log.text.isEmpty ? "bad job" : log.text)
        }
        // 0: success, 3: success with warnings, 2: errors.
        let rc = qpdfjob_run(job)
        if rc == 2 || rc == 1 {
            throw QPDFError(operation: operation, message: log.text.isEmpty ? "qpdf failed (\(rc))" : log.text)
        }
    }
}

/// Collects what qpdf logs. Lives for one call; qpdf gets an unretained pointer to it.
final class MessageLog {
    var text = ""

    func makeLogger() -> qpdflogger_handle? {
        let logger = qpdflogger_create()
        let context = Unmanaged.passUnretained(self).toOpaque()
        let sink: qpdf_log_fn_t = { data, length, context in
            guard let data, let context else { return 0 }
            let log = Unmanaged<MessageLog>.fromOpaque(context).takeUnretainedValue()
            let bytes = UnsafeRawBufferPointer(start: data, count: length)
            log.text += String(decoding: bytes, as: UTF8.self)
            log.text = log.text.trimmingTrailingNewlines()
            return 0
        }
        qpdflogger_set_info(logger, qpdf_log_dest_discard, nil, nil)
        qpdflogger_set_warn(logger, qpdf_log_dest_custom, sink, context)
        qpdflogger_set_error(logger, qpdf_log_dest_custom, sink, context)
        return logger
    }
}

extension String {
    fileprivate func trimmingTrailingNewlines() -> String {
        var result = self
        while result.last == "\n" { result.removeLast() }
        return result
    }
}

/// Just enough JSON to write qpdf job descriptions.
private indirect enum JSONText {
    case string(String)
    case array([JSONText])
    case object([String: JSONText])

    var rendered: String {
        switch self {
        case .string(let value): Self.quoted(value)
        case .array(let items): "[" + items.map(\.rendered).joined(separator: ",") + "]"
        case .object(let fields):
            "{" + fields.sorted { $0.key < $1.key }.map { Self.quoted($0.key) + ":" + $0.value.rendered }.joined(separator: ",") + "}"
        }
    }

    static func quoted(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
