import CQPDF

/// Something in a PDF that PDF/A-2B does not allow and that adding metadata cannot mend: the content must be
/// converted (fonts embedded, transparency flattened, LZW re-encoded), e.g. by Ghostscript's pdfwrite.
public struct ArchivalProblem: Sendable, Equatable, CustomStringConvertible {
    /// The page (from 0) the problem is on; nil for the document as a whole.
    public let page: Int?
    public let reason: String

    public init(page: Int?, reason: String) {
        self.page = page
        self.reason = reason
    }

    public var description: String { page.map { "page \($0 + 1): \(reason)" } ?? reason }
}

extension QPDF {
    /// What in the PDF at `path` keeps it from being PDF/A-2B once it has XMP metadata and an output intent (which
    /// `archiving` adds): a font not embedded (Type 3 aside), a Type 0 font without ToUnicode, a soft mask or
    /// transparency group, LZW, JavaScript, embedded files. Read page by page through each
    /// page's resources, the forms they draw and their annotations' appearances, so each problem names its page.
    /// Encryption, a version above 1.7 and interpolated images are not problems here: `archiving` mends them.
    public static func archivalProblems(_ path: String, password: String? = nil) throws(QPDFError) -> [ArchivalProblem] {
        try withHandle { handle, log throws(QPDFError) in
            guard qpdf_read(handle, path, password ?? "") & Int32(QPDF_ERRORS) == 0, qpdf_has_error(handle) == 0 else {
                throw failure("read", path, handle: handle, log: log)
            }
            var problems: [ArchivalProblem] = []
            let root = qpdf_get_root(handle)
            let names = qpdf_oh_get_key(handle, root, "/Names")
            for key in ["/EmbeddedFiles", "/JavaScript"] where qpdf_oh_has_key(handle, names, key) != 0 {
                problems.append(ArchivalProblem(page: nil, reason: key == "/JavaScript" ? "JavaScript" : "embedded files"))
            }
            qpdf_push_inherited_attributes_to_page(handle)
            var walker = ArchivalWalker(handle: handle)
            for index in 0..<Int(qpdf_get_num_pages(handle)) {
                let page = qpdf_get_page_n(handle, index)
                walker.found = []
                walker.group(qpdf_oh_get_key(handle, page, "/Group"))
                walker.resources(qpdf_oh_get_key(handle, page, "/Resources"), depth: 0)
                let annotations = qpdf_oh_get_key(handle, page, "/Annots")
                if qpdf_oh_is_array(handle, annotations) != 0 {
                    for item in 0..<qpdf_oh_get_array_n_items(handle, annotations) {
                        walker.annotation(qpdf_oh_get_array_item(handle, annotations, item))
                    }
                }
                problems += walker.found.map { ArchivalProblem(page: index, reason: $0) }
            }
            return problems
        }
    }

    /// The document `/Info` entries that are text (`Title`, `Author`, …; keys without the slash), for carrying
    /// them into new metadata.
    public static func documentInfo(_ path: String, password: String? = nil) throws(QPDFError) -> [String: String] {
        try withHandle { handle, log throws(QPDFError) in
            guard qpdf_read(handle, path, password ?? "") & Int32(QPDF_ERRORS) == 0, qpdf_has_error(handle) == 0 else {
                throw failure("read", path, handle: handle, log: log)
            }
            let info = qpdf_oh_get_key(handle, qpdf_get_trailer(handle), "/Info")
            guard qpdf_oh_is_dictionary(handle, info) != 0 else { return [:] }
            var out: [String: String] = [:]
            for key in ["Title", "Author", "Subject", "Keywords"] {
                let value = qpdf_oh_get_key(handle, info, "/" + key)
                guard qpdf_oh_is_string(handle, value) != 0, let text = qpdf_oh_get_utf8_value(handle, value) else { continue }
                let string = String(cString: text)
                if !string.isEmpty { out[key] = string }
            }
            return out
        }
    }

    /// Writes the PDF at `path` to `output` as `setMetadata` does (a new `/Info`, XMP metadata and output intent),
    /// keeping every stream's bytes as they are (not decoded, not compressed again: the page images stay
    /// byte-identical), without any encryption (PDF/A forbids it; a PDF that opens without a password loses its
    /// owner restrictions), with `/Interpolate true` on images turned off (PDF/A forbids it; the pixels are the
    /// same), and as PDF 1.7 at most.
    ///
    /// `converted` replaces the content of some pages: page `page` (from 0) of `path` takes the content streams,
    /// resources and transparency group of page `convertedPage` of the PDF at `converted.path` (the same page,
    /// converted by another program); the page keeps everything else (its annotations and links, its place in
    /// the outline), and the document keeps its own catalog.
    public static func archiving(_ path: String, into output: String, info: [(key: String, value: String)], xmp: [UInt8],
                                 outputIntent: OutputIntent,
                                 converted: (path: String, pages: [(page: Int, convertedPage: Int)])? = nil) throws(QPDFError)
    {
        // The converted file's handle is the outer one: the document that copied objects from it goes first.
        try withHandle { other, otherLog throws(QPDFError) in
            try withHandle { handle, log throws(QPDFError) in
                if let converted {
                    guard qpdf_read(other, converted.path, "") & Int32(QPDF_ERRORS) == 0, qpdf_has_error(other) == 0 else {
                        throw failure("read", converted.path, handle: other, log: otherLog)
                    }
                    qpdf_push_inherited_attributes_to_page(other)
                }
                var graftError: QPDFError?
                try setMetadata(handle, log: log, path, into: output, info: info, xmp: xmp, outputIntent: outputIntent) { handle in
                    qpdf_push_inherited_attributes_to_page(handle)
                    if let converted {
                        let count = Int(qpdf_get_num_pages(handle)), otherCount = Int(qpdf_get_num_pages(other))
                        for pair in converted.pages {
                            guard (0..<count).contains(pair.page), (0..<otherCount).contains(pair.convertedPage) else {
                                graftError = QPDFError(operation: "convert \(path)",
                                                       message: "no page \(pair.page + 1) or converted page \(pair.convertedPage + 1)")
                                return
                            }
                            let page = qpdf_get_page_n(handle, pair.page), source = qpdf_get_page_n(other, pair.convertedPage)
                            for key in ["/Contents", "/Resources", "/Group"] {
                                let value = qpdf_oh_get_key(other, source, key)
                                if qpdf_oh_is_null(other, value) != 0 {
                                    qpdf_oh_remove_key(handle, page, key)
                                } else {
                                    // qpdf copies indirect objects between documents (a direct one is made indirect first).
                                    let indirect = qpdf_oh_is_indirect(other, value) != 0 ? value : qpdf_make_indirect_object(other, value)
                                    qpdf_oh_replace_key(handle, page, key, qpdf_oh_copy_foreign_object(handle, other, indirect))
                                }
                            }
                        }
                    }
                    var walker = ArchivalWalker(handle: handle)
                    walker.fixing = true
                    for index in 0..<Int(qpdf_get_num_pages(handle)) {
                        walker.resources(qpdf_oh_get_key(handle, qpdf_get_page_n(handle, index), "/Resources"), depth: 0)
                    }
                    qpdf_set_decode_level(handle, qpdf_dl_none)
                    qpdf_set_compress_streams(handle, 0)
                    qpdf_set_preserve_encryption(handle, 0)
                    // Objects other than streams packed into object streams, as every document ocrfarm merges.
                    qpdf_set_object_stream_mode(handle, qpdf_o_generate)
                    if let version = qpdf_get_pdf_version(handle).map({ String(cString: $0) }), !version.hasPrefix("1.") {
                        qpdf_force_pdf_version(handle, "1.7")
                    }
                }
                if let graftError { throw graftError }
            }
        }
    }
}

/// Walks a page's resources for `archivalProblems` (or, `fixing`, turns image interpolation off). Forms and
/// annotation appearances are followed a few levels down, each object once.
private struct ArchivalWalker {
    let handle: qpdf_data?
    var fixing = false
    var found: [String] = []
    private var seen: Set<Int> = []

    init(handle: qpdf_data?) { self.handle = handle }

    private func name(_ object: qpdf_oh, _ key: String) -> String? {
        let value = qpdf_oh_get_key(handle, object, key)
        guard qpdf_oh_is_name(handle, value) != 0, let raw = qpdf_oh_get_name(handle, value) else { return nil }
        return String(cString: raw)
    }

    private func keys(_ dictionary: qpdf_oh) -> [String] {
        guard qpdf_oh_is_dictionary(handle, dictionary) != 0 else { return [] }
        var keys: [String] = []
        qpdf_oh_begin_dict_key_iter(handle, dictionary)
        while qpdf_oh_dict_more_keys(handle) != 0, let key = qpdf_oh_dict_next_key(handle) { keys.append(String(cString: key)) }
        return keys
    }

    /// True the first time an indirect object is met (direct objects are always new).
    private mutating func first(_ object: qpdf_oh) -> Bool {
        let id = Int(qpdf_oh_get_object_id(handle, object))
        return id == 0 || seen.insert(id).inserted
    }

    private mutating func note(_ problem: String) {
        if !found.contains(problem) { found.append(problem) }
    }

    mutating func group(_ group: qpdf_oh) {
        if qpdf_oh_is_dictionary(handle, group) != 0, name(group, "/S") == "/Transparency" { note("a transparency group") }
    }

    private func filters(_ dictionary: qpdf_oh) -> [String] {
        let filter = qpdf_oh_get_key(handle, dictionary, "/Filter")
        if qpdf_oh_is_name(handle, filter) != 0, let raw = qpdf_oh_get_name(handle, filter) { return [String(cString: raw)] }
        guard qpdf_oh_is_array(handle, filter) != 0 else { return [] }
        return (0..<qpdf_oh_get_array_n_items(handle, filter)).compactMap { index in
            let item = qpdf_oh_get_array_item(handle, filter, index)
            return qpdf_oh_is_name(handle, item) != 0 ? qpdf_oh_get_name(handle, item).map { String(cString: $0) } : nil
        }
    }

    mutating func resources(_ dictionary: qpdf_oh, depth: Int) {
        guard depth < 8, qpdf_oh_is_dictionary(handle, dictionary) != 0, first(dictionary) else { return }
        let fonts = qpdf_oh_get_key(handle, dictionary, "/Font")
        if !fixing { for key in keys(fonts) { font(qpdf_oh_get_key(handle, fonts, key), depth: depth) } }
        let states = qpdf_oh_get_key(handle, dictionary, "/ExtGState")
        for key in keys(states) where !fixing {
            let state = qpdf_oh_get_key(handle, states, key)
            let mask = qpdf_oh_get_key(handle, state, "/SMask")
            if qpdf_oh_is_dictionary(handle, mask) != 0 { note("a soft mask (transparency)") }
        }
        let objects = qpdf_oh_get_key(handle, dictionary, "/XObject")
        for key in keys(objects) { xObject(qpdf_oh_get_key(handle, objects, key), depth: depth) }
        let patterns = qpdf_oh_get_key(handle, dictionary, "/Pattern")
        for key in keys(patterns) {
            let pattern = qpdf_oh_get_key(handle, patterns, key)
            guard qpdf_oh_is_stream(handle, pattern) != 0, first(pattern) else { continue }
            resources(qpdf_oh_get_key(handle, qpdf_oh_get_dict(handle, pattern), "/Resources"), depth: depth + 1)
        }
    }

    private mutating func xObject(_ object: qpdf_oh, depth: Int) {
        guard qpdf_oh_is_stream(handle, object) != 0, first(object) else { return }
        let dictionary = qpdf_oh_get_dict(handle, object)
        if fixing {
            let interpolate = qpdf_oh_get_key(handle, dictionary, "/Interpolate")
            if qpdf_oh_is_bool(handle, interpolate) != 0, qpdf_oh_get_bool_value(handle, interpolate) != 0 {
                qpdf_oh_replace_key(handle, dictionary, "/Interpolate", qpdf_oh_new_bool(handle, 0))
            }
        } else if filters(dictionary).contains(where: { $0 == "/LZWDecode" || $0 == "/LZW" }) {
            note("LZW compression")
        }
        switch name(dictionary, "/Subtype") {
        case "/Image":
            if !fixing {
                let mask = qpdf_oh_get_key(handle, dictionary, "/SMask")
                if qpdf_oh_is_stream(handle, mask) != 0 { note("an image with a soft mask (transparency)") }
                if qpdf_oh_has_key(handle, dictionary, "/F") != 0 { note("an image with external data") }
            }
        case "/Form":
            if !fixing { group(qpdf_oh_get_key(handle, dictionary, "/Group")) }
            resources(qpdf_oh_get_key(handle, dictionary, "/Resources"), depth: depth + 1)
        default: break
        }
    }

    private mutating func font(_ font: qpdf_oh, depth: Int) {
        guard qpdf_oh_is_dictionary(handle, font) != 0, first(font) else { return }
        let baseFont = name(font, "/BaseFont").map { String($0.dropFirst()) } ?? "unnamed"
        func embedded(_ font: qpdf_oh) -> Bool {
            let descriptor = qpdf_oh_get_key(handle, font, "/FontDescriptor")
            let programs: [String] = ["/FontFile", "/FontFile2", "/FontFile3"]
            return programs.contains { qpdf_oh_has_key(handle, descriptor, $0) != 0 }
        }
        switch name(font, "/Subtype") {
        case "/Type3":
            resources(qpdf_oh_get_key(handle, font, "/Resources"), depth: depth + 1)
        case "/Type0":
            if qpdf_oh_has_key(handle, font, "/ToUnicode") == 0 { note("font \(baseFont) has no ToUnicode map") }
            let descendants = qpdf_oh_get_key(handle, font, "/DescendantFonts")
            if qpdf_oh_is_array(handle, descendants) != 0, qpdf_oh_get_array_n_items(handle, descendants) > 0,
               !embedded(qpdf_oh_get_array_item(handle, descendants, 0)) {
                note("font \(baseFont) is not embedded")
            }
        default:
            if !embedded(font) { note("font \(baseFont) is not embedded") }
        }
    }

    mutating func annotation(_ annotation: qpdf_oh) {
        guard qpdf_oh_is_dictionary(handle, annotation) != 0, first(annotation) else { return }
        let action = qpdf_oh_get_key(handle, annotation, "/A")
        if qpdf_oh_is_dictionary(handle, action) != 0, name(action, "/S") == "/JavaScript" { note("JavaScript") }
        if name(annotation, "/Subtype") == "/FileAttachment" { note("an attached file") }
        let appearances = qpdf_oh_get_key(handle, annotation, "/AP")
        for key in keys(appearances) {
            let appearance = qpdf_oh_get_key(handle, appearances, key)
            if qpdf_oh_is_stream(handle, appearance) != 0 {
                xObject(appearance, depth: 1)
            } else {
                for state in keys(appearance) { xObject(qpdf_oh_get_key(handle, appearance, state), depth: 1) }
            }
        }
    }
}
