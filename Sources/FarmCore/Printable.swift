/// Names and messages from the store made safe for one line of a terminal.
public enum Printable {
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
        return Console.displayWidth(printable) <= width ? printable : cut(printable, width)
    }

    /// `value` cut to at most `width` columns, the last of them an ellipsis (a wide character is not split).
    public static func cut(_ value: String, _ width: Int) -> String {
        var out = "", used = 0
        for character in value {
            let columns = Console.displayWidth(String(character))
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
