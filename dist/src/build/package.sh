#!/usr/bin/env bash
# Makes what the release archives and npm packages hold, in target/: the Java runtime (jlink, from
# the JDK the build runs on: it needs that JDK's jmods), deno/ with the linux-x64 archive's Deno, lib/
# with the jars, bin/ with the launchers,
# and the two npm packages packed by `npm pack`. The archives themselves are made by the assembly
# plugin afterwards. Run by the build (dist/pom.xml); arguments come from there.
set -euo pipefail
java_home=$1 modules=$2 version=$3 deno_version=$4 deno_sha512=$5 jars=$6 basedir=$7 target=$8

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

# The linux-x64 archive's Deno: the binary of the npm registry's @deno/linux-x64-glibc (what the npm
# package's deno dependency installs there), fetched once per version and checked against its pinned digest.
deno="$target/deno"
if [[ ! -x "$deno/deno" || "$(cat "$deno/version" 2>/dev/null)" != "$deno_version" ]]; then
  rm -rf "$deno"
  mkdir -p "$deno"
  (cd "$deno" && npm pack --prefer-offline --loglevel=error "@deno/linux-x64-glibc@$deno_version" >/dev/null)
  package="$deno/deno-linux-x64-glibc-$deno_version.tgz"
  if [[ "$(sha512sum "$package" | cut -d' ' -f1)" != "$deno_sha512" ]]; then
    echo "the npm registry's @deno/linux-x64-glibc@$deno_version is not the one dist/pom.xml pins" \
      "(deno.linux-x64.sha512)" >&2
    exit 1
  fi
  tar -xzf "$package" -C "$deno" --strip-components=1 package/deno
  rm "$package"
  echo "$deno_version" > "$deno/version"
fi

rm -rf "$target/lib" "$target/bin"
mkdir -p "$target/lib" "$target/bin"
cp "$jars/execache.jar" "$jars/execache-client.jar" "$target/lib/"
# the launcher keeps its class-data archives per build (the JVM ignores those made from another jar): a digest of
# the jar, which two builds of one commit make alike, so the zip and the npm package stay reproducible
build="$(sha256sum "$target/lib/execache.jar" | cut -c1-12)"
sed "s/@execache.version@/$version/; s/@execache.build@/$build/" "$basedir/src/main/bin/execache" > "$target/bin/execache"
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
