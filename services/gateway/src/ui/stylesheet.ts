/**
 * The review UI's only stylesheet, served from /ui/style.css so the CSP can allow `style-src 'self'`
 * and still forbid every inline style (no hash to keep in step with the text).
 */
export const STYLESHEET = `
:root { color-scheme: light dark; font-family: system-ui, sans-serif; line-height: 1.5; }
body { max-width: 72rem; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
header { display: flex; flex-wrap: wrap; gap: 1rem; align-items: baseline; justify-content: space-between; border-bottom: 1px solid #8884; }
header form { margin: 0; }
nav ul { list-style: none; padding: 0; display: flex; gap: 1rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 0.4rem 0.6rem; border-bottom: 1px solid #8884; }
.pair { display: grid; grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); gap: 1rem; }
.card { border: 1px solid #8886; border-radius: 0.4rem; padding: 0.75rem 1rem; }
.content { white-space: pre-wrap; overflow-wrap: anywhere; }
.notice { border-left: 0.3rem solid #2a7; padding: 0.3rem 0.8rem; }
.problem { border-left: 0.3rem solid #c33; padding: 0.3rem 0.8rem; }
.decide { display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-end; }
textarea { width: 100%; min-height: 4rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.2rem 1rem; }
dt { font-weight: 600; }
dd { margin: 0; overflow-wrap: anywhere; }
`;
