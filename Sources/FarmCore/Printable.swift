/// Names and messages from the store made safe for one line of a terminal.
public enum Printable {
    /// The columns `text` takes on a terminal: 2 for each wide character (Han, kana, Hangul, full-width forms, most
    /// emoji: East Asian Width W and F), 0 for a character of marks or zero-width format characters alone, else 1.
    public static func width(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + width(of: $1) }
    }

    static func width(of character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        if isWide(first) { return 2 }
        let category = first.properties.generalCategory
        if category == .nonspacingMark || category == .enclosingMark || category == .format { return 0 }
        return 1
    }

    /// East Asian Width W or F (the blocks, as wcwidth takes them).
    static func isWide(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0, 0x23F3, 0x25FD...0x25FE,
             0x2614...0x2615, 0x2648...0x2653, 0x267F, 0x2693, 0x26A1, 0x26AA...0x26AB, 0x26BD...0x26BE,
             0x26C4...0x26C5, 0x26CE, 0x26D4, 0x26EA, 0x26F2...0x26F3, 0x26F5, 0x26FA, 0x26FD, 0x2705,
             0x270A...0x270B, 0x2728, 0x274C, 0x274E, 0x2753...0x2755, 0x2757, 0x2795...0x2797, 0x27B0, 0x27BF,
             0x2B1B...0x2B1C, 0x2B50, 0x2B55, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
             0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F,
             0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x16FE4, 0x17000...0x18AFF, 0x1B000...0x1B2FF,
             0x1F004, 0x1F0CF, 0x1F18E, 0x1F191...0x1F19A, 0x1F200...0x1F251, 0x1F300...0x1F320, 0x1F32D...0x1F335,
             0x1F337...0x1F37C, 0x1F37E...0x1F393, 0x1F3A0...0x1F3CA, 0x1F3CF...0x1F3D3, 0x1F3E0...0x1F3F0,
             0x1F3F4, 0x1F3F8...0x1F43E, 0x1F440, 0x1F442...0x1F4FC, 0x1F4FF...0x1F53D, 0x1F54B...0x1F54E,
             0x1F550...0x1F567, 0x1F57A, 0x1F595...0x1F596, 0x1F5A4, 0x1F5FB...0x1F64F, 0x1F680...0x1F6C5,
             0x1F6CC, 0x1F6D0...0x1F6D2, 0x1F6D5...0x1F6D7, 0x1F6EB...0x1F6EC, 0x1F6F4...0x1F6FC, 0x1F7E0...0x1F7EB,
             0x1F90C...0x1F93A, 0x1F93C...0x1F945, 0x1F947...0x1F9FF, 0x1FA70...0x1FAFF, 0x20000...0x2FFFD,
             0x30000...0x3FFFD:
            true
        default: false
        }
    }

    /// Control characters (newlines in file names, C1 controls, line separators) shown escaped.
    public static func text(_ value: String) -> String {
        guard value.unicodeScalars.contains(where: \.isControlCharacter) else { return value }
        var out = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case _ where scalar.isControlCharacter:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += scalar.value < 0x100 ? "\\x" + hex.leftPadded(to: 2) : "\\u" + hex.leftPadded(to: 4)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `text(value)` cut to `width` terminal columns with an ellipsis.
    public static func clipped(_ value: String, _ width: Int) -> String {
        let printable = text(value)
        return Self.width(printable) <= width ? printable : cut(printable, width)
    }

    /// `value` cut to at most `width` columns, the last of them an ellipsis (a wide character is not split).
    public static func cut(_ value: String, _ width: Int) -> String {
        var out = "", used = 0
        for character in value {
            let columns = Self.width(String(character))
            if used + columns > max(0, width - 1) { break }
            out.append(character)
            used += columns
        }
        return out + "…"
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

extension Unicode.Scalar {
    /// C0 and C1 controls, DEL, the Unicode line and paragraph separators, and the bidirectional formatting
    /// characters: what must never reach a log line or a terminal raw (it breaks the line, or, as C1's CSI does,
    /// moves the cursor, or, as U+202E RIGHT-TO-LEFT OVERRIDE does, shows "gpj.exe" for "exe.jpg").
    public var isControlCharacter: Bool {
        value < 0x20 || (0x7F...0x9F).contains(value) || value == 0x2028 || value == 0x2029
            || value == 0x061C || value == 0x200E || value == 0x200F || (0x202A...0x202E).contains(value)
            || (0x2066...0x2069).contains(value)
    }
}
