-- Prints every delegate call, result, error and position bk.XMLParser gives for a corpus of
-- documents (well-formed, broken, namespaced, entities, CDATA, an abort, a raising method) under
-- the four namespace settings. scripts/test runs it with libbkxml.so and with the XML rock's
-- bk/xml.so (both Sources/XMLModule: libxml2 driven as Foundation drives it) and requires the
-- output foundation_events.txt records, the output of libbkxml.so when it was Foundation's XMLParser.
-- (Left out: `<?pi?>` with no data and `<!NOTATION ...>` with no public id, which crash
-- corelibs Foundation's XMLParser; Sources/XMLModule gives data nil and ignores the notation:
-- Tests/lua/test_bklua_cli.lua.)
local bk = require "bk"

local documents = {
  "", "<", "<a>", "<a/>", "<a></a>", "  <a/>", "<a><b></a>", "<a>text</b>", "<?xml version='1.0'?><a/>",
  "<?xml version='1.0' encoding='UTF-8'?>\n<root>\n  <item id='1' name=\"x &amp; y\">one &lt; two</item>\n"
    .. "  <item id='2'/>\n</root>\n",
  "<a><![CDATA[<raw> & stuff]]></a>", "<a><!-- c --><?pi data here?></a>",
  "<r xmlns='urn:d' xmlns:p='urn:p'><p:c p:at='v' at2='w'/><d/></r>",
  "<a>&undefined;</a>", "<a>&#65;&#x42;</a>", "<a b='1' b='2'/>", "<a>x</a><b/>", "<a>\xff\xfe</a>",
  "<!DOCTYPE a [<!ENTITY e 'entity text'>]><a>&e;</a>",
  "<!DOCTYPE a [<!ELEMENT a (#PCDATA)><!ATTLIST a x CDATA 'p'>]><a/>",
  "<!DOCTYPE a SYSTEM 'file:///etc/passwd'><a/>",
  "<a><b><c>deep</c></b></a trailing>", "<a attr=noquote/>", "<a>unterminated",
  "<p:a xmlns:p='urn:x'><p:b/></p:a>", "<a xmlns:q='urn:q'><q:b xmlns:r='urn:r'><r:c/></q:b></a>",
  "\239\187\191<a>bom</a>", "<a>\n\n  line3 <b/></a>",
  "<?xml version='1.0' encoding='ISO-8859-1'?><a>\233t\233</a>",
  "<a>" .. string.rep("<b>x</b>", 50) .. "</a>", "<a xml:lang='en'/>", "<a>]]></a>",
}

local methods = {
  "parserDidStartDocument", "parserDidEndDocument", "parserDidStartElement", "parserDidEndElement",
  "parserFoundCharacters", "parserFoundIgnorableWhitespace", "parserFoundCDATA", "parserFoundComment",
  "parserFoundProcessingInstructionWithTarget", "parserDidStartMappingPrefix", "parserDidEndMappingPrefix",
  "parserParseErrorOccurred", "parserValidationErrorOccurred",
}

local function show(value)
  if type(value) ~= "table" then return string.format("%q", tostring(value)) end
  local keys = {}
  for key in pairs(value) do keys[#keys + 1] = key end
  table.sort(keys)
  for i, key in ipairs(keys) do keys[i] = key .. "=" .. value[key] end
  return "{" .. table.concat(keys, ",") .. "}"
end

-- Prefix mappings of one element come from a dictionary in Foundation: their order is not part
-- of the contract, so each run of them is printed sorted.
local function printLog(log)
  local i = 1
  while i <= #log do
    local j = i
    local kind = log[i]:match("^(parserDid%a+MappingPrefix)")
    if kind then
      while log[j + 1] and log[j + 1]:find(kind, 1, true) == 1 do j = j + 1 end
    end
    local run = table.move(log, i, j, 1, {})
    if kind then table.sort(run) end
    for _, line in ipairs(run) do print("  " .. line) end
    i = j + 1
  end
end

for i, document in ipairs(documents) do
  for flags = 0, 3 do
    local p, log = bk.XMLParser(document), {}
    p.shouldProcessNamespaces = flags & 1 ~= 0
    p.shouldReportNamespacePrefixes = flags & 2 ~= 0
    for _, method in ipairs(methods) do
      p.delegate:implementMethod(method, function(parser, ...)
        local arguments, parts = table.pack(...), { method, parser.lineNumber .. ":" .. parser.columnNumber }
        for j = 1, arguments.n do parts[#parts + 1] = show(arguments[j]) end
        log[#log + 1] = table.concat(parts, " ")
      end)
    end
    local parsed = p:parse()
    print(("document %d, flags %d: %s %s %s:%s"):format(i, flags, tostring(parsed), tostring(p.parserError),
      p.lineNumber, p.columnNumber))
    printLog(log)
  end
end

for i, document in ipairs({ "<a><b/><c/></a>", "<a><b>text<![CDATA[x]]></b></a>", "<a>&amp;<b/></a>" }) do
  local p, log = bk.XMLParser(document), {}
  for _, method in ipairs(methods) do
    p.delegate:implementMethod(method, function(parser, name)
      log[#log + 1] = method .. " " .. tostring(name) .. " " .. parser.lineNumber .. ":" .. parser.columnNumber
      if name == "b" then parser:abortParsing() end
    end)
  end
  print(("aborted at b %d: %s %s"):format(i, tostring(p:parse()), tostring(p.parserError)))
  printLog(log)
  local q = bk.XMLParser(document)
  q.delegate:implementMethod("parserDidStartElement", function(_, name)
    if name == "b" then error("stop at b", 0) end
  end)
  print("raised at b", pcall(q.parse, q))
end
