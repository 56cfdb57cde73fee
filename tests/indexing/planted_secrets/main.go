package main

const dbPassword = "GoHunter2-Secret-Value"

func main() { println(dbPassword) }
