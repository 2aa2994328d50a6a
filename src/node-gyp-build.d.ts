// The part of node-gyp-build (which ships no types) that src/native-loader.ts uses.
declare module 'node-gyp-build' {
  interface Tags {
    file: string;
    specificity: number;
    runtime?: string;
    napi?: boolean;
    abi?: string;
    libc?: string;
  }
  interface NodeGypBuild {
    (dir: string): unknown;
    /** The binary to load from a package folder: build/Release, build/Debug, then prebuilds/<platform>-<arch>/; throws when none. */
    resolve(dir: string): string;
    /** A file name's tags (node.napi.glibc.node), or undefined when it is not a .node file. */
    parseTags(file: string): Tags | undefined;
    matchTags(runtime: string, abi: string): (tags: Tags | undefined) => tags is Tags;
    compareTags(runtime: string): (a: Tags, b: Tags) => number;
  }
  const nodeGypBuild: NodeGypBuild;
  export default nodeGypBuild;
}
