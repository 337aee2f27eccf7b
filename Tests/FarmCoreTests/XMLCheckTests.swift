import Testing
import FarmCore

@Suite("XML well-formedness check")
struct XMLCheckTests {
    @Test("well-formed documents pass", arguments: [
        "<a/>",
        "<?xml version=\"1.0\"?>\n<!DOCTYPE html>\n<a x='1' y=\"&amp;&#38;&#x26;\"><b>text &lt; more</b><!-- c --><![CDATA[<raw>]]></a>\n",
        "<p:a xmlns:p=\"urn:x\"><p:b/></p:a>",
        "<a>é 中文</a>",
    ])
    func good(_ text: String) {
        #expect(XML.isWellFormed(Array(text.utf8)))
    }

    @Test("broken documents fail", arguments: [
        "", "text", "<a>", "<a></b>", "<a><b></a></b>", "<a/><b/>", "<a x=1/>", "<a x='1' x='2'/>", "<a>&nbsp;</a>",
        "<a>&amp</a>", "<a>1 < 2</a>", "junk<a/>", "<a/>junk", "<a x='<'/>", "<!-- open <a/>", "%PDF-1.4 fake",
    ])
    func bad(_ text: String) {
        #expect(!XML.isWellFormed(Array(text.utf8)))
    }

    @Test("invalid UTF-8 and too deep nesting fail")
    func hostile() {
        #expect(!XML.isWellFormed(Array("<a>".utf8) + [0xFF] + Array("</a>".utf8)))
        let deep = String(repeating: "<a>", count: 300) + String(repeating: "</a>", count: 300)
        #expect(!XML.isWellFormed(Array(deep.utf8)))
        #expect(XML.isWellFormed(Array(deep.utf8), maxDepth: 400))
    }
}
