// Vite's `?raw` import: a file's text as a string, for the workerd suites (which cannot read files).
declare module '*?raw' {
  const text: string;
  export default text;
}
