# Reads JSON on stdin: {"pattern": ..., "texts": [...]}. Prints JSON: the
# compile error, or for each text whether re.search finds the pattern in it,
# as Python's JSON Schema validators (jsonschema, fastjsonschema) apply it.
import json, re, sys

request = json.load(sys.stdin)
try:
    compiled = re.compile(request["pattern"])
except re.error as error:
    print(json.dumps({"error": str(error)}))
    sys.exit(0)
print(json.dumps({"matches": [compiled.search(text) is not None for text in request["texts"]]}))
