/**
 * CSS module typing for `tsc` runs without Next's generated next-env.d.ts (it declares the same
 * module from next/types/global; identical ambient declarations are fine under skipLibCheck).
 */
declare module '*.module.css' {
  const classes: { readonly [key: string]: string };
  export default classes;
}
