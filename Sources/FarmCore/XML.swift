/// XML text escaping.
public enum XML {
    public static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                // Characters XML 1.0 forbids are dropped rather than producing an unparseable document.
                let v = scalar.value
                if v == 0x9 || v == 0xA || v == 0xD || (0x20...0xD7FF).contains(v) || (0xE000...0xFFFD).contains(v)
                    || (0x10000...0x10FFFF).contains(v)
                {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }
}
