import FarmCore

/// A file or folder name made from a document name, safe to create inside an export folder.
///
/// Document names are whatever was submitted: paths ("/scans/box 7/p1.tif"), `--document` names, names with
/// control characters or `../`. The safe name is one path component that is never empty, `.` or `..`, never
/// hidden, and readable on Linux, macOS and Windows:
/// - path separators (`/`, `\`) join the parts of the name with `_`; empty, `.` and `..` parts are dropped;
/// - control characters (C0, DEL, C1), line and paragraph separators, bidirectional overrides (which make a name
///   read differently than it is), the byte-order mark, noncharacters and the characters Windows forbids
///   (`< > : " | ? *`) become `_`; every other character, Unicode letters and emoji included, is kept;
/// - spaces at either end and dots at the end are trimmed, as is the extension of a submitted file (`.tif`, `.pdf`,
///   …: the export adds its own), so a safe name never ends in `.pdf`;
/// - a leading `.`, `-` or `~` becomes `_` (no hidden files, no names read as options or home folders), and
///   Windows device names (`CON`, `NUL`, `COM1`, …) get a `_` in front;
/// - a name longer than `maximumBytes` keeps its start and its end (the file name of a path) around a `…`;
/// - a name with nothing left is `document`.
public enum SafeName {
    /// The longest safe name in UTF-8 bytes, well under the 255 that file systems allow, leaving room for a
    /// collision suffix (`~123`) and the export's endings (`.pdf`, `.page.xml`).
    public static let maximumBytes = 150

    /// The name given to a document whose name has nothing usable in it.
    public static let fallback = "document"

    /// Endings of submitted files, dropped from a name's end (any case).
    static let inputExtensions = PageFiles.endings

    /// Names Windows reserves for devices, with or without an extension.
    static let deviceNames: Set<String> = Set(["CON", "PRN", "AUX", "NUL"] + (1...9).flatMap { ["COM\($0)", "LPT\($0)"] })

    /// The safe form of `name`.
    ///
    /// Works on Unicode scalars (a store of a million documents is named in one pass); only a name that must be
    /// shortened is cut between characters.
    public static func make(_ name: String) -> String {
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(name.utf8.count)
        // Path parts joined by "_", without empty, "." and ".." parts.
        var part: [Unicode.Scalar] = []
        func flush() {
            guard !part.isEmpty, part != ["."], part != [".", "."] else { return part.removeAll() }
            if !scalars.isEmpty { scalars.append("_") }
            scalars += part
            part.removeAll()
        }
        for scalar in name.unicodeScalars {
            if scalar == "/" || scalar == "\\" { flush() } else { part.append(scalar) }
        }
        flush()
        trimWhitespace(&scalars)
        for index in scalars.indices where isUnsafe(scalars[index]) { scalars[index] = "_" }
        trimEnds(&scalars)
        if let first = scalars.first, first == "." || first == "-" || first == "~" { scalars[0] = "_" }
        var stem = scalars.prefix { $0 != "." }[...]
        while let last = stem.last, isWhitespace(last) { stem.removeLast() }
        if stem.count <= 4, deviceNames.contains(String(String.UnicodeScalarView(stem)).uppercased()) { scalars.insert("_", at: 0) }
        let result = shortened(String(String.UnicodeScalarView(scalars)))
        return result.isEmpty ? fallback : result
    }

    /// The deepest tree an export mirrors (`--layout tree`); deeper parts of a name are joined into the last one.
    public static let maximumDepth = 16

    /// The safe relative path made from a document name, for `--layout tree`: the name's path parts (split at `/`
    /// and `\`, without empty, `.` and `..` parts), each made safe by `make` and joined with `/`, so
    /// `box17/folder3` stays a folder and a file in it and `../../etc/evil` becomes `etc/evil`. Parts past
    /// `maximumDepth` are joined into the last one with `_`.
    public static func makePath(_ name: String) -> String {
        var parts = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).map(String.init).filter { $0 != "." && $0 != ".." }
        if parts.count > maximumDepth {
            parts = Array(parts.prefix(maximumDepth - 1)) + [parts.dropFirst(maximumDepth - 1).joined(separator: "_")]
        }
        guard !parts.isEmpty else { return fallback }
        return parts.map { make($0) }.joined(separator: "/")
    }

    /// Whether `name` is one path component that cannot leave the folder it is created in: what the export checks
    /// before creating anything.
    public static func isSingleComponent(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.utf8.contains(0)
            && name.utf8.count <= 255
    }

    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true                  // control characters
        case 0x22, 0x2A, 0x3A, 0x3C, 0x3E, 0x3F, 0x7C: return true  // " * : < > ? |, which Windows forbids
        case 0x20...0x7E: return false
        case 0x2028, 0x2029: return true                            // line and paragraph separators
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true   // bidirectional controls
        case 0xFEFF, 0xFFF9...0xFFFB: return true                   // byte-order mark, interlinear annotation
        case 0xFDD0...0xFDEF: return true                           // noncharacters…
        default: return scalar.value & 0xFFFE == 0xFFFE             // …and U+xFFFE, U+xFFFF in every plane
        }
    }

    static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII ? scalar == " " || (0x09...0x0D).contains(scalar.value) : scalar.properties.isWhitespace
    }

    static func trimWhitespace(_ scalars: inout [Unicode.Scalar]) {
        while let last = scalars.last, isWhitespace(last) { scalars.removeLast() }
        let leading = scalars.prefix(while: isWhitespace).count
        if leading > 0 { scalars.removeFirst(leading) }
    }

    /// Spaces trimmed at both ends; dots, spaces and a submitted file's extension trimmed at the end, until none is left.
    static func trimEnds(_ scalars: inout [Unicode.Scalar]) {
        while true {
            let before = scalars.count
            trimWhitespace(&scalars)
            while let last = scalars.last, last == "." || isWhitespace(last) { scalars.removeLast() }
            if let dot = scalars.lastIndex(of: "."), scalars.count - dot - 1 <= 4 {
                let ending = String(String.UnicodeScalarView(scalars[(dot + 1)...])).lowercased()
                if inputExtensions.contains(ending) { scalars.removeSubrange(dot...) }
            }
            if scalars.count == before { return }
        }
    }

    /// `name` if it fits in `maximumBytes`; else its start and end around `…`, cut between characters.
    static func shortened(_ name: String) -> String {
        guard name.utf8.count > maximumBytes else { return name }
        let ellipsis = "…"
        let budget = maximumBytes - ellipsis.utf8.count
        let headBudget = budget * 2 / 5
        var head = "", tail = ""
        var used = 0
        for character in name {
            let size = character.utf8.count
            guard used + size <= headBudget else { break }
            head.append(character)
            used += size
        }
        used = 0
        for character in name.reversed() {
            let size = character.utf8.count
            guard used + size <= budget - head.utf8.count else { break }
            tail.insert(character, at: tail.startIndex)
            used += size
        }
        return head + ellipsis + tail
    }
}

/// Gives each document of an export a name of its own.
///
/// A document gets the safe form of its name (`SafeName`) unless a document with a smaller id already has that name,
/// compared ignoring case (macOS and Windows folders do); then it gets the name with `~<id>` after it (`~<id>-2`, …
/// in the unlikely case that is taken too). Documents are named in id order over the whole store, whatever is being
/// exported, so a document's name depends only on the documents submitted before it: it is the same in every
/// export, now and after more submissions. Remembers a 128-bit hash per name given, not the names: 24 bytes a
/// document.
public struct ExportNames: Sendable {
    private struct Key: Hashable, Sendable {
        let high: UInt64
        let low: UInt64
    }

    private var taken: Set<Key>

    /// `expected`: about how many documents will be named (room is made for them at once).
    public init(expected: Int = 0, tree: Bool = false) {
        taken = Set(minimumCapacity: expected)
        self.tree = tree
    }

    /// Whether names keep their folders (`box17/folder3`) or are flattened into one component (`box17_folder3`).
    private let tree: Bool

    /// The name of the document `id` called `documentName`: a relative path with `tree`, else one component. Call
    /// in increasing id order.
    public mutating func name(for documentName: String, id: DocumentID) -> String {
        let base = tree ? SafeName.makePath(documentName) : SafeName.make(documentName)
        var candidate = base
        var round = 1
        while !taken.insert(Self.key(candidate)).inserted {
            candidate = base + "~" + String(id.rawValue) + (round > 1 ? "-\(round)" : "")
            round += 1
        }
        return candidate
    }

    /// Two 64-bit hashes of the name's lower-case UTF-8 (FNV-1a and a multiply-rotate one). A false match would only
    /// give a document a `~<id>` it did not need; equal names always match.
    private static func key(_ name: String) -> Key {
        var high: UInt64 = 0xcbf2_9ce4_8422_2325
        var low: UInt64 = 0x9e37_79b9_7f4a_7c15
        for byte in name.lowercased().utf8 {
            high = (high ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            low = (low &+ UInt64(byte)) &* 0xbf58_476d_1ce4_e5b9
            low = low << 31 | low >> 33
        }
        return Key(high: high, low: low)
    }
}
