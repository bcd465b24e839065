#!/usr/bin/env bash
# Makes what the release archives and npm packages hold, in target/: the Java runtime (jlink, from
# the JDK the build runs on: it needs that JDK's jmods), lib/ with the jars, bin/ with the launchers,
# and the two npm packages packed by `npm pack`. The archives themselves are made by the assembly
# plugin afterwards. Run by the build (dist/pom.xml); arguments come from there.
set -euo pipefail
java_home=$1 modules=$2 version=$3 deno_version=$4 jars=$5 basedir=$6 target=$7

jmods="$java_home/jmods"
if [[ ! -f "$jmods/java.base.jmod" ]]; then
  echo "the release build makes a Java runtime with jlink from the jmods of the JDK that runs Maven, and" \
    "$java_home has none: use a JDK that has them (Debian: openjdk-17-jdk-headless; Temurin 17/21)" >&2
  exit 1
fi

# The runtime: only the modules execache needs (dist/pom.xml says why each), no debug symbols,
# headers or man pages; its default class-data archive lets the launcher add one per command.
rm -rf "$target/runtime"
"$java_home/bin/jlink" --module-path "$jmods" --add-modules "$modules" \
  --strip-debug --no-header-files --no-man-pages --compress=2 --generate-cds-archive \
  --output "$target/runtime"

rm -rf "$target/lib" "$target/bin"
mkdir -p "$target/lib" "$target/bin"
cp "$jars/execache.jar" "$jars/execache-client.jar" "$target/lib/"
sed "s/@execache.version@/$version/" "$basedir/src/main/bin/execache" > "$target/bin/execache"
cp "$basedir/src/main/bin/execache.cmd" "$target/bin/"
chmod 755 "$target/bin/execache"

# The npm packages: `execache` (launcher, jars, the deno dependency) and `@execache/linux-x64` (the runtime).
npm="$target/npm"
rm -rf "$npm"
mkdir -p "$npm/execache" "$npm/linux-x64"
cp -R "$basedir/src/main/npm/execache/." "$npm/execache/"
cp -R "$target/lib" "$target/bin" "$npm/execache/"
cp "$basedir/src/main/npm/README.md" "$npm/execache/"
cp -R "$basedir/src/main/npm/linux-x64/." "$npm/linux-x64/"
cp -a "$target/runtime" "$npm/linux-x64/"
for package in execache linux-x64; do
  sed -i "s/@execache.version@/$version/g; s/@deno.version@/$deno_version/g" "$npm/$package/package.json"
done
rm -f "$target"/execache-*.tgz
(cd "$npm" && npm pack --loglevel=error --pack-destination "$target" ./execache ./linux-x64 >/dev/null)
