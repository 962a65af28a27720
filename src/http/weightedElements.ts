/**
 * The elements of a header whose list elements may carry a weight (`;q=`), Accept and Accept-Encoding:
 * each element's value and its q as written (undefined without one), lower case and trimmed. What a q
 * counts for is the caller's rule.
 */
export function weightedElements(header: string): { value: string; q: string | undefined }[] {
  return header.split(',').map((element) => {
    const [value = '', ...parameters] = element.split(';').map((part) => part.trim().toLowerCase());
    const q = parameters.find((parameter) => /^q\s*=/.test(parameter));
    return { value, q: q?.slice(q.indexOf('=') + 1).trim() };
  });
}
