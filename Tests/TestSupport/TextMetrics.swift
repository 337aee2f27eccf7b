// Test-only: how the tests score a reading against ground truth (no shipped module needs it).
/// Character error rate, normalized the way `shared/bench/score.py` does it: whitespace runs become one space,
/// ends are trimmed, and spaces next to CJK characters are dropped (Tesseract spaces Han text inconsistently).
public enum TextMetrics {
    /// Edit distance between the normalized texts divided by the length of the normalized reference.
    public static func characterErrorRate(reference: String, hypothesis: String) -> Double {
        let ref = Array(normalized(reference))
        let hyp = Array(normalized(hypothesis))
        if ref.isEmpty { return hyp.isEmpty ? 0 : 1 }
        return Double(editDistance(ref, hyp)) / Double(ref.count)
    }

    /// Order-free word F1 as `shared/bench/score.py` counts it: the texts as bags of word-character runs (letters,
    /// digits and `_`; each CJK character a word of its own), 2 × common / (reference words + hypothesis words).
    public static func wordF1(reference: String, hypothesis: String, foldCase: Bool = false) -> Double {
        func bag(_ text: String) -> [String: Int] {
            var counts: [String: Int] = [:]
            var run = ""
            func flush() { if !run.isEmpty { counts[run, default: 0] += 1; run = "" } }
            for character in normalized(foldCase ? text.lowercased() : text) {
                if isCJK(character) && (character.isLetter || character.isNumber) {
                    flush()
                    counts[String(character), default: 0] += 1
                } else if character.isLetter || character.isNumber || character == "_" {
                    run.append(character)
                } else {
                    flush()
                }
            }
            flush()
            return counts
        }
        let (a, b) = (bag(reference), bag(hypothesis))
        let common = a.reduce(0) { $0 + min($1.value, b[$1.key] ?? 0) }
        let total = a.values.reduce(0, +) + b.values.reduce(0, +)
        return total == 0 ? 1 : 2 * Double(common) / Double(total)
    }

    public static func normalized(_ text: String) -> String {
        var collapsed: [Character] = []
        var pendingSpace = false
        for character in text {
            if character.isWhitespace {
                pendingSpace = !collapsed.isEmpty
                continue
            }
            if pendingSpace { collapsed.append(" ") }
            pendingSpace = false
            collapsed.append(character)
        }
        var result: [Character] = []
        for (index, character) in collapsed.enumerated() {
            if character == " " {
                let before = index > 0 ? collapsed[index - 1] : nil
                let after = index + 1 < collapsed.count ? collapsed[index + 1] : nil
                if before.map(isCJK) == true || after.map(isCJK) == true { continue }
            }
            result.append(character)
        }
        return String(result)
    }

    /// True for Han, kana, CJK punctuation and full-width forms (the ranges score.py uses).
    public static func isCJK(_ character: Character) -> Bool {
        guard let scalar = character.unicodeScalars.first?.value else { return false }
        return (0x2E80...0x2FFF).contains(scalar) || (0x3000...0x303F).contains(scalar)
            || (0x3040...0x30FF).contains(scalar) || (0x3400...0x4DBF).contains(scalar)
            || (0x4E00...0x9FFF).contains(scalar) || (0xF900...0xFAFF).contains(scalar)
            || (0xFF00...0xFFEF).contains(scalar) || scalar == 0x201C || scalar == 0x201D
    }

    /// Levenshtein distance (insertions, deletions and substitutions cost 1).
    public static func editDistance<T: Equatable>(_ a: [T], _ b: [T]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
