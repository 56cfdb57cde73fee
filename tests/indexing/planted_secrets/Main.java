public class Main {
    private static final String API_SECRET = "JavaHunter2-Secret-Value";
    public static void main(String[] args) { System.out.println(API_SECRET); }
}
