import Testing
import Crypto

@Suite("SHA-256 by libcrypto")
struct SHA256Tests {
    @Test("matches the FIPS 180-4 test vectors")
    func vectors() {
        #expect(SHA256.hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(SHA256.hex(million) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("a digest fed piece by piece equals the one-shot digest")
    func hasher() {
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        let pieces = SHA256.Hasher()
        var start = 0
        for size in [0, 1, 63, 64, 65, 4096, 333_333] + Array(repeating: 100_000, count: 6) {
            let end = min(start + size, million.count)
            million[start..<end].withUnsafeBytes { pieces.update($0) }
            start = end
        }
        million[start...].withUnsafeBytes { pieces.update($0) }
        #expect(SHA256.hex(digest: pieces.finish()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        #expect(SHA256.hex(digest: SHA256.Hasher().finish()) == SHA256.hex([]))
    }

    @Test("the digest is 32 bytes and hex spells it")
    func digestAndHex() {
        let digest = SHA256.digest(Array("abc".utf8))
        #expect(digest.count == 32)
        #expect(digest.first == 0xba && digest.last == 0xad)
        #expect(SHA256.hex(digest: [0x00, 0x0f, 0xf0, 0xff]) == "000ff0ff")
    }

    @Test("hashes from many threads at once agree")
    func concurrent() async {
        let input = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let expected = SHA256.hex(input)
        let results = await withTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { SHA256.hex(input) } }
            var all: [String] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(results.count == 8 && results.allSatisfy { $0 == expected })
    }
}
