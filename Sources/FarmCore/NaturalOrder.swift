/// Orders names the way people number pages: "page2" before "page10", then by plain text.
public enum NaturalOrder {
    public static func areInIncreasingOrder(_ a: String, _ b: String) -> Bool {
        let left = chunks(a)
        let right = chunks(b)
        for (x, y) in zip(left, right) where x != y {
            switch (x, y) {
            case let (.number(m, mText), .number(n, nText)):
                if m != n { return m < n }
                return mText < nText  // "02" before "2" only to keep the order total
            case let (.text(s), .text(t)): return s.lowercased() != t.lowercased() ? s.lowercased() < t.lowercased() : s < t
            case (.number, .text): return true
            case (.text, .number): return false
            }
        }
        if left.count != right.count { return left.count < right.count }
        return a < b
    }

    private enum Chunk: Equatable {
        case text(String)
        case number(Double, String)
    }

    private static func chunks(_ s: String) -> [Chunk] {
        var result: [Chunk] = []
        var current = ""
        var digits = false
        func flush() {
            guard !current.isEmpty else { return }
            result.append(digits ? .number(Double(current) ?? .infinity, current) : .text(current))
            current = ""
        }
        for character in s {
            let isDigit = character.isASCII && character.isNumber
            if isDigit != digits { flush(); digits = isDigit }
            current.append(character)
        }
        flush()
        return result
    }
}
