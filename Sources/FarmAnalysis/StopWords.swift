/// Function words left out of a page's keywords, per Tesseract language code.
///
/// Each list is one string of words separated by spaces or newlines (cheap to compile, no duplicate-key traps).
/// Latin lists are lowercase and compared with a lowercased word; apostrophes are straight (’ is folded to ' before
/// the comparison). Chinese lists hold particles, pronouns, conjunctions, measure words and common adverbs; most
/// single characters among them would be dropped anyway as one-character tokens, but they are listed so the lists
/// can serve alone.
public enum StopWords {
    /// The stop words of all `languages` together (a mixed page needs every list); empty for unknown codes.
    /// Vertical models (`chi_sim_vert`) share the list of their language.
    public static func words(for languages: [String]) -> Set<String> {
        var words: Set<String> = []
        for language in languages {
            let base = language.hasSuffix("_vert") ? String(language.dropLast(5)) : language
            if let list = lists[base] { words.formUnion(list) }
        }
        return words
    }

    /// The languages that have a list.
    public static var languages: [String] { lists.keys.sorted() }

    static let lists: [String: Set<String>] = [
        "eng": parse(english),
        "deu": parse(german),
        "fra": parse(french),
        "spa": parse(spanish),
        "chi_sim": parse(simplifiedChinese),
        "chi_tra": parse(traditionalChinese),
    ]

    private static func parse(_ list: String) -> Set<String> {
        Set(list.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init))
    }

    static let english = """
        a about above across after afterwards again against all almost alone along already also although always am
        among amongst an and another any anybody anyhow anyone anything anyway anywhere are aren't around as at
        be became because become becomes becoming been before beforehand behind being below beside besides between
        beyond both but by
        can can't cannot could couldn't
        did didn't do does doesn't doing don't done down during
        each eg e.g either else elsewhere enough etc even ever every everyone everything everywhere except
        few for former formerly from further furthermore
        get gets got had hadn't has hasn't have haven't having he he'd he'll he's hence her here hereafter hereby
        herein here's hers herself him himself his how however how's
        i i'd i'll i'm i've ie i.e if in inc indeed into is isn't it it's its itself
        just last latter latterly least less let's like ltd
        made make many may me meanwhile might mine more moreover most mostly much must mustn't my myself
        namely neither never nevertheless next no nobody none noone nor not nothing now nowhere
        of off often on once one only onto or other others otherwise ought our ours ourselves out over own
        per perhaps please put
        quite rather re really
        same say says see seem seemed seeming seems several shall shan't she she'd she'll she's should shouldn't
        since so some somehow someone something sometime sometimes somewhere still such
        than that that's the their theirs them themselves then thence there thereafter thereby therefore therein
        there's thereupon these they they'd they'll they're they've this those though through throughout thru thus
        to together too toward towards
        under unless until up upon us used very via
        was wasn't we we'd we'll we're we've well were weren't what whatever what's when whence whenever when's
        where whereafter whereas whereby wherein where's whereupon wherever whether which while whither who whoever
        whole whom who's whose why why's will with within without won't would wouldn't
        yet you you'd you'll your you're yours yourself yourselves you've
        """

    static let german = """
        aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes auch auf aus
        bei beim bin bis bist da damit dann das dass daß dein deine deinem deinen deiner dem den denn der derer des
        dessen dich die dies diese diesem diesen dieser dieses dir doch dort du durch ein eine einem einen einer
        eines einig einige einigem einigen einiger einiges er es etwas euch euer eure für gegen gewesen hab habe
        haben hat hatte hatten hier hin hinter ich ihm ihn ihnen ihr ihre ihrem ihren ihrer ihres im in indem ins
        ist jede jedem jeden jeder jedes jene jenem jenen jener jenes jetzt kann kein keine keinem keinen keiner
        keines können könnte machen man manche manchem manchen mancher manches mein meine meinem meinen meiner
        mich mir mit muss musste nach nicht nichts noch nun nur ob oder ohne sehr sein seine seinem seinen seiner
        seines selbst sich sie sind so solche solchem solchen solcher soll sollte sondern sonst über um und uns
        unser unsere unter viel vom von vor während war waren warst was weg weil weiter welche welchem welchen
        welcher welches wenn werde werden wie wieder will wir wird wirst wo wollen wollte würde würden zu zum zur
        zwar zwischen
        """

    static let french = """
        à au aux avec avoir ce ceci cela celle celles celui ces cet cette ceux chez comme dans de des du elle elles
        en encore est et été être eu il ils je la le les leur leurs lui ma mais me même mes moi mon ne ni nos notre
        nous on ont ou où par pas peu plus pour qu que quel quelle quelles quels qui sa sans se ses si son sont sous
        sur ta te tes toi ton tous tout toute toutes très tu un une vos votre vous y c'est d'un d'une l'on qu'il
        qu'elle aussi avant après alors donc dont entre était étaient fait faire peut sera seront ainsi autre autres
        bien car cependant chaque depuis lors lorsque parce pendant puis quand quoi selon soit tandis
        """

    static let spanish = """
        a al algo algunas algunos ante antes como con contra cual cuando de del desde donde durante e el él ella
        ellas ellos en entre era erais eran eras eres es esa esas ese eso esos esta está estaba estado están estar
        este esto estos fue fueron ha había han hasta hay la las le les lo los más me mi mis mucho muy nada ni no
        nos nosotros o os otra otras otro otros para pero poco por porque que qué quien quienes se sea ser si sí
        sido sin sobre su sus también tanto te tiene tienen todo todos tu tus un una uno unos vosotros y ya yo
        cada cual cuales después entonces mismo misma pues sino según tan toda todas aunque aquí allí así
        """

    static let simplifiedChinese = """
        的 了 是 在 和 与 及 或 而 也 都 就 还 又 并 但 却 则 即 便 把 被 让 给 对 向 从 到 由 于 以 为 因 所 之 其 此 这 那 哪
        我 你 他 她 它 您 吗 呢 吧 啊 呀 哦 嗯 着 过 得 地 个 些 每 各 某 等 上 下 中 里 不 没 很 更 最 太 将 会 能 可 要 该 有
        我们 你们 他们 她们 它们 咱们 自己 大家 人家 别人
        这个 那个 这些 那些 这里 那里 这样 那样 这么 那么 这种 那种 一个 一些 一种 一样 一直 一起 一定 一般
        什么 怎么 怎样 为什么 如何 哪里 哪儿 哪个 多少 几个
        因为 所以 但是 可是 而且 并且 或者 还是 如果 虽然 虽说 即使 尽管 不过 然而 然后 于是 因此 而是 不是 就是 也是 还有 以及
        只是 只有 只要 除了 关于 对于 至于 由于 通过 根据 按照 为了 以后 以前 之后 之前 之间 之中 其中 其他 其它 另外
        已经 正在 曾经 将要 可以 可能 应该 能够 需要 没有 不会 不能 不要 非常 十分 特别 比较 更加 还要 也许 或许 大概
        很多 许多 这是 那是 有些 有的 所有 一切 任何 每个 各种 以上 以下 以及 等等 起来 出来 下来 上来 进行 作为 成为
        """

    static let traditionalChinese = """
        的 了 是 在 和 與 及 或 而 也 都 就 還 又 並 但 卻 則 即 便 把 被 讓 給 對 向 從 到 由 於 以 為 因 所 之 其 此 這 那 哪
        我 你 他 她 它 您 嗎 呢 吧 啊 呀 哦 嗯 著 過 得 地 個 些 每 各 某 等 上 下 中 裡 裏 不 沒 很 更 最 太 將 會 能 可 要 該 有
        我們 你們 他們 她們 它們 咱們 自己 大家 人家 別人
        這個 那個 這些 那些 這裡 那裡 這樣 那樣 這麼 那麼 這種 那種 一個 一些 一種 一樣 一直 一起 一定 一般
        什麼 怎麼 怎樣 為什麼 如何 哪裡 哪兒 哪個 多少 幾個
        因為 所以 但是 可是 而且 並且 或者 還是 如果 雖然 雖說 即使 儘管 不過 然而 然後 於是 因此 而是 不是 就是 也是 還有 以及
        只是 只有 只要 除了 關於 對於 至於 由於 通過 根據 按照 為了 以後 以前 之後 之前 之間 之中 其中 其他 其它 另外
        已經 正在 曾經 將要 可以 可能 應該 能夠 需要 沒有 不會 不能 不要 非常 十分 特別 比較 更加 還要 也許 或許 大概
        很多 許多 這是 那是 有些 有的 所有 一切 任何 每個 各種 以上 以下 等等 起來 出來 下來 上來 進行 作為 成為
        """
}
