#!/usr/bin/env bash
# npm run test:system -- image: the suites in test/image/ against the image that
# npm run image builds (or the one PET_STORE_IMAGE names), one file at a time.
set -euo pipefail
cd "$(dirname "$0")/../.."
ref=${PET_STORE_IMAGE:-$(bash scripts/image/build.sh | tail -n 1)}
echo "testing the image $ref" >&2
PET_STORE_IMAGE=$ref exec npx tap --jobs=1 --timeout=600 test/image/*.test.ts "$@"
