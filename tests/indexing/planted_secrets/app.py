API_KEY = "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
DB_PASSWORD = "Pyth0nHunter2-Secret"


def connect(host, token="ghp_Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7A"):
    aws = "AKIAZZTOPSECRETPY1234"
    return host, token, aws
