/** The ```sh blocks of a Markdown text, in order (the shell steps docs ask a reader to run). */
export function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string);
}
