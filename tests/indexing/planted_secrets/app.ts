export const secretToken: string = "ghp_TsZx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8C";
export function auth(apiKey: string = "sk-live-ts9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"): string { return apiKey; }
