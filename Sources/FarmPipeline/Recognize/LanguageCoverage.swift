import FarmCore
import FarmRuntime
import Tesseract

/// Whether an engine's symbols can write a Tesseract language: the language's letters, from the LSTM character set
/// in its `.traineddata`, against the symbols the engine has. `AutomaticRecognizer` lets the neural engine read only
/// pages whose languages it can write (its dictionary has Latin, Greek without some accents, Chinese and kana; no
/// Cyrillic, Arabic, Hebrew, Devanagari or Hangul).
public enum LanguageCoverage {
    /// The share of a language's letters an engine must have to be said to write it.
    static let writableShare = 0.95

    /// The letters (characters the character set marks alphabetic) of `language`, from
    /// `dataPath/language.traineddata`; nil when the file is missing or has no LSTM character set.
    public static func letters(of language: String, dataPath: String = TesseractInfo.dataPath) -> Set<Character>? {
        let path = dataPath.hasSuffix("/") ? dataPath + language + ".traineddata" : dataPath + "/" + language + ".traineddata"
        guard let bytes = try? FileSystem.read(path) else { return nil }
        return letters(traineddata: bytes)
    }

    /// The letters of a `.traineddata` file's LSTM character set.
    ///
    /// The file is Tesseract's component archive (`TessdataManager`): an Int32 count of component slots, that many
    /// little-endian Int64 offsets (-1 for an absent component), then the components; the LSTM character set is slot
    /// 21 (`TESSDATA_LSTM_UNICHARSET`), text with a count line and then one character a line, its first field the
    /// character and its second a hexadecimal property mask whose bit 0 says alphabetic.
    static func letters(traineddata bytes: [UInt8]) -> Set<Character>? {
        let slot = 21
        func int(_ at: Int, _ size: Int) -> Int? {
            guard at >= 0, at + size <= bytes.count else { return nil }
            var value: UInt64 = 0
            for index in (0..<size).reversed() { value = value << 8 | UInt64(bytes[at + index]) }
            return size == 4 ? Int(Int32(truncatingIfNeeded: value)) : Int(Int64(bitPattern: value))
        }
        guard let count = int(0, 4), count > slot, count < 1000 else { return nil }
        let offsets = (0..<count).map { int(4 + 8 * $0, 8) ?? -1 }
        let start = offsets[slot]
        guard start > 0, start < bytes.count else { return nil }
        let end = offsets[(slot + 1)...].first { $0 > start } ?? bytes.count
        guard end <= bytes.count else { return nil }
        let text = String(decoding: bytes[start..<end], as: UTF8.self)
        var letters = Set<Character>()
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", maxSplits: 2)
            guard fields.count >= 2, fields[0].count == 1, let mask = Int(fields[1], radix: 16), mask & 1 == 1 else { continue }
            letters.insert(fields[0].first!)
        }
        return letters.isEmpty ? nil : letters
    }

    /// The share of `letters` that `symbols` has (1 when there are no letters).
    static func share(of letters: Set<Character>, in symbols: Set<Character>) -> Double {
        letters.isEmpty ? 1 : Double(letters.intersection(symbols).count) / Double(letters.count)
    }

    /// Whether `symbols` write every language of `languages` (a language whose data cannot be read counts as not
    /// written); with the share of each language's letters found.
    public static func writes(_ languages: [String], with symbols: Set<Character>, dataPath: String = TesseractInfo.dataPath)
        -> (writes: Bool, shares: [(String, Double)])
    {
        let shares = languages.map { language in (language, letters(of: language, dataPath: dataPath).map { share(of: $0, in: symbols) } ?? 0) }
        return (shares.allSatisfy { $0.1 >= writableShare }, shares)
    }
}
