/**
 * Container language fields. MP4/MOV store a packed three-letter ISO 639-2/T code (ffmpeg's
 * mov muxer writes "und" for "en" or "pt-BR"), and Matroska's Language element is ISO 639-2
 * too (ffmpeg 5.1 writes the tag verbatim, so "en" would be an invalid value there). Plans
 * carry BCP 47 tags, so the primary subtag is converted; the region ("-BR") has no place in
 * these fields and is dropped.
 */

/**
 * ISO 639-1 -> ISO 639-2/T (terminology) codes, four letters per pair ("en"+"eng").
 * Generated from Debian's iso-codes package (/usr/share/iso-codes/json/iso_639-2.json,
 * every entry with an alpha_2), 184 pairs.
 */
const ISO_639_1_TO_2T_PAIRS = [
  "aaaar ababk aeave afafr akaka amamh anarg arara asasm avava ayaym azaze babak bebel bgbul bhbih",
  "bibis bmbam bnben bobod brbre bsbos cacat ceche chcha cocos crcre csces cuchu cvchv cycym dadan",
  "dedeu dvdiv dzdzo eeewe elell eneng eoepo esspa etest eueus fafas ffful fifin fjfij fofao frfra",
  "fyfry gagle gdgla glglg gngrn guguj gvglv hahau heheb hihin hohmo hrhrv hthat huhun hyhye hzher",
  "iaina idind ieile igibo iiiii ikipk ioido isisl itita iuiku jajpn jvjav kakat kgkon kikik kjkua",
  "kkkaz klkal kmkhm knkan kokor krkau kskas kukur kvkom kwcor kykir lalat lbltz lglug lilim lnlin",
  "lolao ltlit lulub lvlav mgmlg mhmah mimri mkmkd mlmal mnmon mrmar msmsa mtmlt mymya nanau nbnob",
  "ndnde nenep ngndo nlnld nnnno nonor nrnbl nvnav nynya ococi ojoji omorm orori ososs papan pipli",
  "plpol pspus ptpor quque rmroh rnrun roron rurus rwkin sasan scsrd sdsnd sesme sgsag sisin skslk",
  "slslv smsmo snsna sosom sqsqi srsrp ssssw stsot susun svswe swswa tatam tetel tgtgk ththa titir",
  "tktuk tltgl tntsn toton trtur tstso tttat twtwi tytah uguig ukukr ururd uzuzb veven vivie vovol",
  "wawln wowol xhxho yiyid yoyor zazha zhzho zuzul",
].join(" ");

const ISO_639_2T: ReadonlyMap<string, string> = new Map(
  ISO_639_1_TO_2T_PAIRS.split(" ").map((pair) => [pair.slice(0, 2), pair.slice(2)]),
);

/**
 * The three-letter code for a BCP 47 tag: "en" -> "eng", "pt-BR" -> "por", "fil" -> "fil";
 * "und" when the primary subtag is a two-letter code ISO 639-2 does not list.
 */
export function containerLanguage(tag: string): string {
  const primary = tag.split("-")[0]?.toLowerCase() ?? "";
  if (/^[a-z]{3}$/.test(primary)) return primary;
  return ISO_639_2T.get(primary) ?? "und";
}
